// The effect ledger: every execution of a tool body, appended when the body is entered, on a
// connection of its own that faults never touch. It deduplicates nothing: it is the ground truth
// the checks compare toolfence's records with. A Redis list, or a Postgres table, next to (never
// inside) the store's records: a record-loss fault (FLUSHALL, a restart, a TRUNCATE of the
// records table) never touches it.
import { Redis } from 'ioredis';
import pg from 'pg';
import type { LedgerEntry } from './protocol.js';

export interface Ledger {
  append(entry: LedgerEntry): Promise<void>;
  readAll(): Promise<LedgerEntry[]>;
  close(): Promise<void>;
}

export function redisLedgerKey(prefix: string): string {
  return `${prefix}:ledger`;
}

export function postgresLedgerTable(schema: string): string {
  return `${pg.escapeIdentifier(schema)}.effect_ledger`;
}

/** The DDL of the Postgres ledger (run once by the coordinator, before any worker starts). */
export function postgresLedgerDdl(schema: string): string {
  return `CREATE TABLE IF NOT EXISTS ${postgresLedgerTable(schema)} (
    seq bigserial PRIMARY KEY,
    exec_id text NOT NULL,
    key text NOT NULL,
    tool text NOT NULL,
    fence bigint NOT NULL,
    attempt integer NOT NULL,
    pid integer NOT NULL,
    worker text NOT NULL,
    time_ms double precision NOT NULL,
    delivery bigint NOT NULL,
    claim_sent_ms double precision NOT NULL,
    claim_replied_ms double precision NOT NULL
  )`;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Retries a ledger write: the ledger must not lose an execution to a passing hiccup. */
async function withRetry(write: () => Promise<unknown>): Promise<void> {
  let lastError: unknown;
  for (const delayMs of [0, 20, 50, 100, 200, 400, 800]) {
    if (delayMs > 0) await sleep(delayMs);
    try {
      await write();
      return;
    } catch (error) {
      lastError = error;
    }
  }
  throw lastError;
}

export function redisLedger(url: string, prefix: string, connectionName: string): Ledger {
  const client = new Redis(url, { connectionName, maxRetriesPerRequest: 5 });
  client.on('error', () => {});
  const key = redisLedgerKey(prefix);
  return {
    append: (entry) => withRetry(() => client.rpush(key, JSON.stringify(entry))),
    async readAll() {
      const raw = await client.lrange(key, 0, -1);
      return raw.map((line) => JSON.parse(line) as LedgerEntry);
    },
    async close() {
      client.disconnect();
    },
  };
}

export function postgresLedger(url: string, schema: string, applicationName: string): Ledger {
  const pool = new pg.Pool({ connectionString: url, max: 3, application_name: applicationName });
  pool.on('error', () => {});
  const table = postgresLedgerTable(schema);
  return {
    append: (entry) =>
      withRetry(() =>
        pool.query(
          `INSERT INTO ${table}
             (exec_id, key, tool, fence, attempt, pid, worker, time_ms, delivery, claim_sent_ms, claim_replied_ms)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
          [
            entry.execId,
            entry.key,
            entry.tool,
            entry.fence,
            entry.attempt,
            entry.pid,
            entry.worker,
            entry.timeMs,
            entry.delivery,
            entry.claimSentMs,
            entry.claimRepliedMs,
          ],
        ),
      ),
    async readAll() {
      const result = await pool.query(
        `SELECT exec_id, key, tool, fence, attempt, pid, worker, time_ms, delivery, claim_sent_ms, claim_replied_ms
         FROM ${table} ORDER BY seq`,
      );
      return result.rows.map((row: Record<string, unknown>) => ({
        execId: String(row.exec_id),
        key: String(row.key),
        tool: String(row.tool) as LedgerEntry['tool'],
        fence: Number(row.fence),
        attempt: Number(row.attempt),
        pid: Number(row.pid),
        worker: String(row.worker),
        timeMs: Number(row.time_ms),
        delivery: Number(row.delivery),
        claimSentMs: Number(row.claim_sent_ms),
        claimRepliedMs: Number(row.claim_replied_ms),
      }));
    },
    async close() {
      await pool.end();
    },
  };
}
