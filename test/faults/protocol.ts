// Messages between the fault-suite coordinator (harness.ts) and its worker processes
// (worker.ts), sent over the Node IPC channel of child_process.spawn. One JSON object each.

export type StoreKind = 'redis' | 'postgres' | 'dynamodb';

/** The two tools of the plan: one at-most-once, one at-least-once. */
export const EFFECTFUL_TOOL = 'charge_card';
export const IDEMPOTENT_TOOL = 'upsert_profile';
export type ToolName = typeof EFFECTFUL_TOOL | typeof IDEMPOTENT_TOOL;

/** What a worker is told when it starts (JSON, its first command-line argument). */
export interface WorkerConfig {
  readonly store: StoreKind;
  /** Where the worker's store connections go: the stalling proxy in front of the store. */
  readonly url: string;
  /** Where the ledger lives: a server no fault touches (never frozen, flushed or restarted). */
  readonly ledgerUrl: string;
  /**
   * Client-side deadline of every store operation, passed as `operationTimeoutMs` (RULES S5) and
   * as RedisStore's older `commandTimeoutMs`; a store freeze sometimes outlasts it.
   */
  readonly operationTimeoutMs: number;
  /** Redis key prefix, or Postgres schema of the records and the ledger (DynamoDB: the table, and the ledger's Redis prefix). */
  readonly namespace: string;
  /** Redis connectionName / Postgres application_name of the store's connections (killed by faults). */
  readonly connectionName: string;
  /** Name of the ledger's own connection (never killed: the ledger is the ground truth). */
  readonly ledgerConnectionName: string;
  readonly tenant: string;
  readonly leaseMs: number;
  readonly heartbeatMs: number;
  readonly maxAttempts: number;
  readonly retentionMs: number;
}

/** How a tool body behaves; chosen per key by the coordinator, so every delivery agrees. */
export interface BodyProfile {
  /** How long the body works after writing its ledger entry. */
  readonly sleepMs: number;
  /** True: keeps working after its signal aborts (a body that cannot be cancelled). */
  readonly ignoreSignal: boolean;
}

export interface CallCommand {
  readonly t: 'call';
  /** Delivery id (one call may be delivered several times, to several workers). */
  readonly id: number;
  readonly callId: string;
  readonly tool: ToolName;
  readonly arguments: Record<string, unknown>;
  readonly runId: string;
  readonly body: BodyProfile;
}

export interface DelayRenewCommand {
  readonly t: 'delay-renew';
  /** How long each renewal issued in the window is held. */
  readonly delayMs: number;
  /** Length of the window, from receipt. */
  readonly forMs: number;
  /** `send`: hold the renewal before it reaches the store; `reply`: hold its answer. */
  readonly mode: 'send' | 'reply';
}

export type CoordinatorMessage =
  | CallCommand
  | DelayRenewCommand
  | { readonly t: 'drain' }
  | { readonly t: 'exit' };

/** The value every tool body returns: which execution produced it. */
export interface ToolValue {
  readonly execId: string;
  readonly fence: number;
  readonly pid: number;
}

export type AnswerKind =
  /** A value produced by a body that ran in this delivery. */
  | 'completed'
  /** A value produced by another execution (the recorded outcome, or a holder's answer). */
  | 'deduplicated'
  | 'indeterminate'
  | 'abandoned'
  /** OutcomePendingError: another caller still runs it; a retry gets its answer. */
  | 'pending'
  /** StoreUnavailableError: the store could not be asked; the body did not run for this claim. */
  | 'unavailable'
  /** Anything else (a bug in the suite or in toolfence). */
  | 'error';

export interface Answer {
  readonly t: 'answer';
  readonly id: number;
  readonly kind: AnswerKind;
  readonly value?: ToolValue;
  /** Fence named by an IndeterminateOutcomeError / ExecutionAbandonedError. */
  readonly fence?: number;
  readonly errorName?: string;
  readonly message?: string;
  /** Executions (execIds) whose body this delivery entered. */
  readonly ranHere: readonly string[];
}

/** A guard event, reduced to what the checks use. */
export interface EventMessage {
  readonly t: 'event';
  readonly type: string;
  readonly key: string;
  readonly fence: number;
  readonly attempt: number;
  readonly recorded?: boolean;
  readonly errorType?: string;
  /** Worker clock (Date.now()) when the event was emitted (for reading a trail). */
  readonly timeMs: number;
  /** The delivery (guard.run call) the event belongs to: ties it to that call's executions. */
  readonly delivery: number;
}

export interface BodyMessage {
  readonly t: 'body';
  readonly phase: 'start' | 'end';
  readonly execId: string;
  readonly key: string;
  readonly fence: number;
  /** For `end`: true when the body returned a value, false when it threw (its signal aborted). */
  readonly returned?: boolean;
  /** Worker clock (Date.now()) of the start or end. */
  readonly timeMs?: number;
}

export interface DrainedMessage {
  readonly t: 'drained';
  /** Renewals this worker held back on a `delay-renew` command, over its whole life. */
  readonly renewalsDelayed: number;
}

export type WorkerMessage =
  | { readonly t: 'ready'; readonly pid: number }
  | Answer
  | EventMessage
  | BodyMessage
  | { readonly t: 'renew-delayed' }
  /** A claim that threw (StoreUnavailableError): it may still have landed on the store. */
  | { readonly t: 'claim-failed'; readonly key: string }
  /**
   * A release the store answered `released`: the record is deleted, so the key's next claim
   * starts again at fence 1 (a new life of that key, as after a record loss).
   */
  | {
      readonly t: 'released';
      readonly key: string;
      readonly fence: number;
      readonly sentMs: number;
      readonly repliedMs: number;
    }
  /** A claim answered with a record held by the claim's own owner (the claim ran twice). */
  | { readonly t: 'own-claim'; readonly status: string; readonly tool: string }
  | DrainedMessage;

/** One execution as the effect ledger holds it. */
export interface LedgerEntry {
  readonly execId: string;
  readonly key: string;
  readonly tool: ToolName;
  readonly fence: number;
  readonly attempt: number;
  readonly pid: number;
  readonly worker: string;
  /** Worker clock, epoch ms, when the body was entered (for reading a trail). */
  readonly timeMs: number;
  /**
   * The delivery (one `guard.run` call) whose body this is: check (a) counts executions per
   * delivery, whatever the guard retried inside it.
   */
  readonly delivery: number;
  /**
   * Worker clock (Date.now(), one clock for every process of the run) when the claim that
   * acquired this fence was sent and when its reply came: the claim landed in between, so the
   * execution belongs to the store life (the time between two record losses) of that window.
   */
  readonly claimSentMs: number;
  readonly claimRepliedMs: number;
}
