// `toolfence migrate`: the store's schema migrations, run out of band (before a deploy, from a
// job), with progress, as operators of pg-boss and graphile-worker run theirs. PostgreSQL runs
// its online steps (a batched backfill, CREATE INDEX CONCURRENTLY) without blocking the claims of
// running stores, and resumes an interrupted migration (docs/postgres.md, "Migrations"); SQLite
// applies its migrations; Redis keeps no schema.
import type { Work } from './context.js';
import { ExitCode } from './exit-codes.js';

/** One progress report of PostgresStore.ensureSchema (its `MigrationProgress`). */
interface Progress {
  readonly version: number;
  readonly name: string;
  readonly step: string;
  readonly phase: 'start' | 'progress' | 'done';
  readonly rows?: number;
  readonly totalRows?: number;
}

interface Migrating {
  ensureSchema(options?: {
    readonly timeoutMs?: number;
    readonly onProgress?: (progress: Progress) => void;
  }): Promise<{ readonly applied: readonly number[] }>;
}

function hasSchema(store: unknown): store is Migrating {
  return typeof (store as Partial<Migrating>).ensureSchema === 'function';
}

/** Human progress lines at most this often during a backfill (every start and end is printed). */
const PROGRESS_EVERY_MS = 1_000;

export interface MigrateFlags {
  /** `--timeout`, already parsed to ms. */
  readonly timeoutMs?: number;
}

export function migrateCommand(flags: MigrateFlags): Work {
  return async (store, _guard, context) => {
    const { output, json, place } = context;
    if (!hasSchema(store)) {
      if (json) output.json({ store: place.store, applied: [], schema: false });
      else output.out(`${place.store}: nothing to migrate (this store keeps no schema)`);
      return ExitCode.done;
    }
    let lastPrintedMs = 0;
    const onProgress = (progress: Progress): void => {
      if (json) {
        output.json({ progress });
        return;
      }
      const now = performance.now();
      if (progress.phase === 'progress' && now - lastPrintedMs < PROGRESS_EVERY_MS) return;
      lastPrintedMs = now;
      const rows =
        progress.rows === undefined
          ? ''
          : ` ${progress.rows.toLocaleString('en-US')}${progress.totalRows ? ` of ~${progress.totalRows.toLocaleString('en-US')}` : ''} rows`;
      output.out(`migration ${progress.name}: ${progress.step} ${progress.phase}${rows}`);
    };
    const started = performance.now();
    const { applied } = await store.ensureSchema({
      onProgress,
      ...(flags.timeoutMs === undefined ? {} : { timeoutMs: flags.timeoutMs }),
    });
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    if (json)
      output.json({ store: place.store, namespace: place.namespace, applied, seconds: Number(seconds) });
    else if (applied.length === 0) output.out(`${place.store} ${place.namespace}: the schema is up to date`);
    else output.out(`${place.store} ${place.namespace}: applied ${applied.join(', ')} in ${seconds} s`);
    return ExitCode.done;
  };
}
