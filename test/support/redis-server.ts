// The one way tests, the fault suite and the benchmark start a redis-server of their own: a child
// process (not a daemon) on loopback, in a fresh temporary directory, persisting nothing
// (`--save "" --appendonly no`), so a restart comes back empty and a SIGKILL's exit is seen at
// once. The shared Redis (REDIS_URL) is never touched. Stopped by its own pid, never by name.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';

export interface RedisServer {
  readonly port: number;
  /** The pid of the server process running now (a restart changes it). */
  readonly pid: number;
  readonly directory: string;
  /** SIGKILL the server and start it again, empty, on the same port. */
  restartEmpty(): Promise<void>;
  /** SIGKILL the server and remove its directory. */
  stop(): Promise<void>;
}

export interface RedisServerOptions {
  /** Extra redis-server arguments (cluster mode...). */
  readonly args?: readonly string[];
  /** The port; default the first free one of `ports`, else any free loopback port. */
  readonly port?: number;
  /** Ports to try in turn (one that already answers is skipped). */
  readonly ports?: readonly number[];
}

/** Every server process started here and not stopped yet (killed by killRedisServers). */
const running = new Set<ChildProcess>();

/** SIGKILLs every redis-server this module started that still runs (a failed test's cleanup). */
export function killRedisServers(): void {
  for (const child of running) child.kill('SIGKILL');
  running.clear();
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A free TCP port on loopback (nothing listens on it when this resolves). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** True when a Redis on 127.0.0.1:`port` answers PING. */
export async function redisAnswers(port: number): Promise<boolean> {
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

async function launch(port: number, directory: string, args: readonly string[]): Promise<ChildProcess> {
  const child = spawn(
    'redis-server',
    [
      '--bind',
      '127.0.0.1',
      '--port',
      String(port),
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      directory,
      ...args,
    ],
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
  child.on('error', (error) => {
    exited = true;
    stderr ||= error.message;
  });
  running.add(child);
  const deadline = Date.now() + 5000;
  while (Date.now() < deadline && !exited) {
    if (await redisAnswers(port)) return child;
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

function serverOn(
  port: number,
  directory: string,
  args: readonly string[],
  first: ChildProcess,
): RedisServer {
  let child = first;
  return {
    port,
    directory,
    get pid() {
      return child.pid ?? 0;
    },
    async restartEmpty() {
      await kill(child);
      child = await launch(port, directory, args);
    },
    async stop() {
      await kill(child);
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

/** Starts a private redis-server (see the file's header); fails naming the ports it tried. */
export async function startRedisServer(options: RedisServerOptions = {}): Promise<RedisServer> {
  const args = options.args ?? [];
  const candidates = options.port !== undefined ? [options.port] : (options.ports ?? [await freePort()]);
  const directory = mkdtempSync(join(tmpdir(), 'toolfence-redis-'));
  let lastError: unknown;
  for (const port of candidates) {
    if (options.port === undefined && (await redisAnswers(port))) continue;
    try {
      return serverOn(port, directory, args, await launch(port, directory, args));
    } catch (error) {
      lastError = error;
    }
  }
  rmSync(directory, { recursive: true, force: true });
  throw new Error(`could not start redis-server on port ${candidates.join(', ')}`, { cause: lastError });
}
