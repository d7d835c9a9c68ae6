/**
 * A child process holding one SQLiteStore, driven over stdin/stdout by the cross-process tests
 * (test/support/sqlite.ts `spawnSqliteWorker`). Started as
 *   node --import tsx --conditions=@toolfence/source test/support/sqlite-worker.ts '{"path":"..."}'
 * Each stdin line is `{ id, calls: [{ method, args }] }`; the calls run one after another on the
 * store and the reply line is `{ id, results: [{ ok, value | error, atMs }] }`, where `atMs` is
 * the high-resolution wall clock (performance.timeOrigin + performance.now()) when the call
 * settled. Requests are handled concurrently (a waitForSettle does not hold up a claim).
 */
import { createInterface } from 'node:readline';
import { SQLiteStore, type SQLiteStoreOptions } from '@toolfence/stores/sqlite';

const store = new SQLiteStore(JSON.parse(process.argv[2] ?? '{}') as SQLiteStoreOptions);
const nowMs = () => performance.timeOrigin + performance.now();

interface Request {
  readonly id: number;
  readonly calls: { readonly method: string; readonly args: unknown[] }[];
}

async function handle(request: Request): Promise<void> {
  const results: unknown[] = [];
  for (const call of request.calls) {
    try {
      const method = (store as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>)[
        call.method
      ];
      if (typeof method !== 'function') throw new Error(`no method ${call.method}`);
      const value = await method.apply(store, call.args);
      results.push({ ok: true, value, atMs: nowMs() });
    } catch (error) {
      results.push({
        ok: false,
        error: { name: (error as Error).name, message: (error as Error).message },
        atMs: nowMs(),
      });
    }
  }
  process.stdout.write(`${JSON.stringify({ id: request.id, results })}\n`);
}

createInterface({ input: process.stdin })
  .on('line', (line) => void handle(JSON.parse(line) as Request))
  .on('close', () => {
    void store.close().then(() => process.exit(0));
  });
process.stdout.write('READY\n');
