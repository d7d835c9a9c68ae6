// The fault suite's own redis-server: a child process of the coordinator (not a daemon), so a
// restart is a SIGKILL whose exit is seen at once and a start on the same port. It never
// persists anything (`--save "" --appendonly no`): a restart comes back empty. The shared Redis
// (127.0.0.1:6379) is never touched.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';

/** Ports of the fault suite (RULES.md); the first free one is taken. */
export const PRIVATE_REDIS_PORTS = [6421, 6422, 6423, 6424, 6425, 6426, 6427, 6428, 6429] as const;

export interface PrivateRedis {
  readonly port: number;
  /** SIGKILL the server and start it again, empty, on the same port. */
  restartEmpty(): Promise<void>;
  stop(): Promise<void>;
}

/** Every server process this module started and has not stopped (killed by killPrivateRedis). */
const running = new Set<ChildProcess>();

/** SIGKILLs every private redis-server still running (a failed test's cleanup). */
export function killPrivateRedis(): void {
  for (const child of running) child.kill('SIGKILL');
  running.clear();
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function answers(port: number): Promise<boolean> {
  const probe = new Redis({ host: '127.0.0.1', port, lazyConnect: true, retryStrategy: () => null });
  probe.on('error', () => {});
  try {
    await probe.connect();
    return (await probe.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
}

async function launch(port: number, directory: string): Promise<ChildProcess> {
  const child = spawn(
    'redis-server',
    ['--bind', '127.0.0.1', '--port', String(port), '--save', '', '--appendonly', 'no', '--dir', directory],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let exited = false;
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-2000);
  });
  child.on('exit', () => {
    exited = true;
    running.delete(child);
  });
  child.on('error', () => {
    exited = true;
  });
  running.add(child);
  const deadline = Date.now() + 5000;
  while (Date.now() < deadline && !exited) {
    if (await answers(port)) return child;
    await sleep(10);
  }
  child.kill('SIGKILL');
  throw new Error(`redis-server did not start on 127.0.0.1:${port}${stderr === '' ? '' : `: ${stderr}`}`);
}

async function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGKILL');
  await exited;
}

/** Starts a private redis-server on the first free port of PRIVATE_REDIS_PORTS. */
export async function startPrivateRedis(): Promise<PrivateRedis> {
  const directory = mkdtempSync(join(tmpdir(), 'toolfence-faults-redis-'));
  let lastError: unknown;
  for (const port of PRIVATE_REDIS_PORTS) {
    if (await answers(port)) continue;
    let child: ChildProcess;
    try {
      child = await launch(port, directory);
    } catch (error) {
      lastError = error;
      continue;
    }
    return {
      port,
      async restartEmpty() {
        await kill(child);
        child = await launch(port, directory);
      },
      async stop() {
        await kill(child);
        rmSync(directory, { recursive: true, force: true });
      },
    };
  }
  rmSync(directory, { recursive: true, force: true });
  throw new Error(`no port of ${PRIVATE_REDIS_PORTS.join(',')} took a private redis-server`, {
    cause: lastError,
  });
}
