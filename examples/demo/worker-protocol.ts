// What the demo and its child worker process (worker.ts) say to each other.
import type { Script } from './policies.js';

/** Arguments of the child process, as one JSON argument. */
export interface WorkerArguments {
  readonly redisUrl: string;
  readonly prefix: string;
  readonly runId: string;
  /** Name of the ledger (Redis lists under `<prefix>:<ledger>`) the provider counts effects in. */
  readonly ledger: string;
  readonly guarded: boolean;
  readonly leaseMs: number;
  readonly script: Script;
}

/** The line the worker prints once both calls of its step are inside the provider. */
export const IN_BODY = 'IN_BODY';
/** Prefix of a line carrying one guard event of the worker, as JSON. */
export const EVENT = 'EVENT ';
