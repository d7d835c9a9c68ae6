// The client-side deadline of one operation (rule S5 in packages/core/docs/store-contract.md):
// a server that is frozen or cut off never answers, and `statement_timeout` cannot fire there.
import { StoreUnavailableError } from '@toolfence/core/store';

/**
 * Rejects with `StoreUnavailableError` when `pending` has not settled `timeoutMs` after this call.
 * `onLate` gets a value that arrives after the deadline (a pool checkout that completed too late
 * is destroyed, not leaked). `store` names the store in the message.
 */
export function withDeadline<T>(
  operation: string,
  pending: Promise<T>,
  timeoutMs: number,
  store: string,
  onLate?: (value: T) => void,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let expired = false;
    const timer = setTimeout(() => {
      expired = true;
      reject(
        new StoreUnavailableError(
          operation,
          `${store}: no answer within operationTimeoutMs (${timeoutMs} ms)`,
          // The statement may be waiting on a row lock and commit after this.
          { outcome: 'unknown' },
        ),
      );
    }, timeoutMs);
    pending.then(
      (value) => {
        clearTimeout(timer);
        if (expired) onLate?.(value);
        else resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        if (!expired) reject(error);
      },
    );
  });
}
