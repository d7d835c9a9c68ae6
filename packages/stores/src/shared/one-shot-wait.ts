// The end of one waitForSettle: the first outcome (a result or an error) wins, and ending undoes
// what the wait set up (timers, listeners, its place among the store's waiters). Shared by the
// Redis, PostgreSQL and SQLite waits (each store's settle-wait.ts).
import type { WaitResult } from '@toolfence/core/store';

export abstract class OneShotWait {
  protected finished = false;

  constructor(
    private readonly resolveWait: (result: WaitResult) => void,
    private readonly rejectWait: (error: unknown) => void,
  ) {}

  /** Clears what the wait set up; called once, when it ends. */
  protected abstract cleanup(): void;

  /** True for the one call that ends the wait. */
  protected end(): boolean {
    if (this.finished) return false;
    this.finished = true;
    this.cleanup();
    return true;
  }

  protected finish(result: WaitResult): void {
    if (this.end()) this.resolveWait(result);
  }

  protected fail(error: unknown): void {
    if (this.end()) this.rejectWait(error);
  }
}
