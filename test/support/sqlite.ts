/**
 * SQLite for tests: one fresh directory per test file under the OS temp directory (removed after),
 * so no test shares a database file with another. No server is needed.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** A fresh directory for database files; `remove()` deletes it and everything in it. */
export function sqliteDirectory(label: string): {
  readonly path: string;
  file(name: string): string;
  remove(): void;
} {
  const path = mkdtempSync(join(tmpdir(), `toolfence-sqlite-${label}-`));
  return {
    path,
    file: (name) => join(path, name),
    remove: () => rmSync(path, { recursive: true, force: true }),
  };
}

export interface WorkerResult {
  readonly ok: boolean;
  readonly value?: unknown;
  readonly error?: { readonly name: string; readonly message: string };
  /** Wall clock (ms, sub-ms resolution) in the worker when the call settled. */
  readonly atMs: number;
}

export interface SqliteWorker {
  readonly pid: number;
  /** Runs the calls one after another in the worker's store; resolves with every result. */
  run(calls: { method: string; args: unknown[] }[]): Promise<WorkerResult[]>;
  call(method: string, ...args: unknown[]): Promise<WorkerResult>;
  /** Ends the worker (its store closes) and waits for it to exit. */
  stop(): Promise<void>;
}

/** Starts a child process with its own SQLiteStore (test/support/sqlite-worker.ts) and waits until it is ready. */
export async function spawnSqliteWorker(options: Record<string, unknown>): Promise<SqliteWorker> {
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
  const script = fileURLToPath(new URL('./sqlite-worker.ts', import.meta.url));
  const child = spawn(
    process.execPath,
    ['--import', tsx, '--conditions=@toolfence/source', script, JSON.stringify(options)],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const pending = new Map<number, (results: WorkerResult[]) => void>();
  let nextId = 0;
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (line === 'READY') return resolve();
      const reply = JSON.parse(line) as { id: number; results: WorkerResult[] };
      pending.get(reply.id)?.(reply.results);
      pending.delete(reply.id);
    });
    void exited.then(() => reject(new Error(`sqlite worker exited early:\n${stderr}`)));
  });
  const run = (calls: { method: string; args: unknown[] }[]) =>
    new Promise<WorkerResult[]>((resolve) => {
      const id = ++nextId;
      pending.set(id, resolve);
      child.stdin.write(`${JSON.stringify({ id, calls })}\n`);
    });
  return {
    pid: child.pid ?? 0,
    run,
    call: async (method, ...args) => (await run([{ method, args }]))[0] as WorkerResult,
    stop: async () => {
      child.stdin.end();
      await exited;
    },
  };
}
