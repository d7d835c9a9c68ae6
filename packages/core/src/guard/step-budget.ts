// One deadline per guard step. A step is what the guard asks of the store
// before it answers the caller: the claim (its first try and the resend of a claim whose reply
// was lost), the recording of an outcome (complete and its retries). The store's own
// operationTimeoutMs bounds each TRY; without a budget per step, a frozen store held a new call
// for two tries (10 s with the default 5 s) and a call whose store froze during its body for
// three (15.9 s). A retry now runs only inside what is left of its step, raced against it: the
// step answers within its budget, whatever the tries. A try the guard stopped waiting for may
// still land in the store later; the fence makes a late claim or result harmless (rule S5).
import { StoreUnavailableError } from '../errors/store-unavailable-error.js';
import type { IdempotencyStore } from '../store/idempotency-store.js';

/** What the guard knows of its budget: the milliseconds per step, and whether to bound first tries. */
export interface StepBudget {
  /** Milliseconds per step; undefined: no bound (a store without a deadline of its own). */
  readonly budgetMs: number | undefined;
  /**
   * True when a step's first try must be raced too: the budget is shorter than the store's own
   * deadline, or the store declares none. False on the hot path of the default setup, where the
   * store's deadline equals the budget and bounds the first try by itself (no timer per call).
   */
  readonly boundsFirstTry: boolean;
}

/**
 * The budget of a guard: `storeStepTimeoutMs` when given, else the store's declared
 * `operationTimeoutMs`, else none.
 * @throws RangeError when `storeStepTimeoutMs` is not a whole number of ms in 1..2^31-1.
 */
export function stepBudgetOf(store: IdempotencyStore, storeStepTimeoutMs: number | undefined): StepBudget {
  const declared = store.operationTimeoutMs;
  if (storeStepTimeoutMs === undefined) {
    return { budgetMs: declared, boundsFirstTry: false };
  }
  if (
    !Number.isSafeInteger(storeStepTimeoutMs) ||
    storeStepTimeoutMs < 1 ||
    storeStepTimeoutMs > 2_147_483_647
  ) {
    throw new RangeError(
      `Guard: storeStepTimeoutMs must be a whole number of milliseconds in 1..2147483647, got ${String(storeStepTimeoutMs)}`,
    );
  }
  return {
    budgetMs: storeStepTimeoutMs,
    boundsFirstTry: declared === undefined || storeStepTimeoutMs < declared,
  };
}

/** The deadline (performance.now() ms) of a step that started at `startedAtMs`: Infinity without a budget. */
export function stepDeadline(budget: StepBudget, startedAtMs: number): number {
  return budget.budgetMs === undefined ? Number.POSITIVE_INFINITY : startedAtMs + budget.budgetMs;
}

/** The deadline of a step that starts now; the clock is read only when there is a budget. */
export function stepDeadlineFromNow(budget: StepBudget): number {
  return budget.budgetMs === undefined ? Number.POSITIVE_INFINITY : performance.now() + budget.budgetMs;
}

/** True when a pause of `pauseMs` and then a try still fit before `deadline`. */
export function fitsBefore(deadline: number, pauseMs: number): boolean {
  return performance.now() + pauseMs < deadline;
}

/**
 * Runs one try of `operation` within what is left of its step; past the deadline it rejects with
 * `StoreUnavailableError` and the try's own answer, whenever it comes, is dropped.
 */
export function withinStep<R>(
  operation: string,
  budget: StepBudget,
  deadline: number,
  run: () => Promise<R>,
): Promise<R> {
  if (deadline === Number.POSITIVE_INFINITY) return run();
  const remainingMs = deadline - performance.now();
  if (remainingMs <= 0) return Promise.reject(budgetSpent(operation, budget));
  const pending = run();
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(budgetSpent(operation, budget)), remainingMs);
  });
  // A late failure of a try nobody waits for any more is not an unhandled rejection.
  pending.catch(() => undefined);
  return Promise.race([pending, expired]).finally(() => clearTimeout(timer));
}

function budgetSpent(operation: string, budget: StepBudget): StoreUnavailableError {
  return new StoreUnavailableError(
    operation,
    `no answer within the guard's store step budget (storeStepTimeoutMs ${budget.budgetMs} ms, retries included)`,
    // The try in flight may still land.
    { outcome: 'unknown' },
  );
}
