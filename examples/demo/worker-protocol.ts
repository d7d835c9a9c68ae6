// What the demo and its child worker process (worker.ts) say to each other.
import type { Script } from './policies.js';

/** The shared store the child process opens: the same Redis (key prefix) or SQLite file (table) as the demo. */
export type WorkerStore =
  | { readonly kind: 'redis'; readonly url: string; readonly prefix: string }
  | { readonly kind: 'sqlite'; readonly path: string; readonly table: string };

/** Arguments of the child process, as one JSON argument. */
export interface WorkerArguments {
  readonly store: WorkerStore;
  readonly runId: string;
  /**
   * Name of the ledger the provider counts effects in (Redis lists under `<prefix>:<ledger>`, or
   * rows of the SQLite table `<table>_ledger`).
   */
  readonly ledger: string;
  readonly guarded: boolean;
  readonly leaseMs: number;
  readonly script: Script;
}

/** The line the worker prints once both calls of its step are inside the provider. */
export const IN_BODY = 'IN_BODY';
/** Prefix of a line carrying one guard event of the worker, as JSON. */
export const EVENT = 'EVENT ';
