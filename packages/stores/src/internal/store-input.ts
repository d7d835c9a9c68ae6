/**
 * The checks of `@toolfence/core`'s store-input.ts that it does not export yet (`checkTenant`,
 * `checkWaitOptions`, `checkResolution` live in packages/core/src/store/store-input.ts; once
 * `@toolfence/core` exports them this file should re-export them instead). Same limits, same
 * `StoreInputError`s.
 */
import {
  checkOutcome,
  checkRecordRef,
  MAX_TIMER_MS,
  type Resolution,
  StoreInputError,
  type WaitOptions,
} from '@toolfence/core';

/** A tenant alone (`forget`). @throws StoreInputError */
export function checkTenant(tenant: string): void {
  // A placeholder key that always passes: only the tenant is judged.
  checkRecordRef({ tenant, key: '0' });
}

/** `timeoutMs` a finite number of ms in 0..MAX_TIMER_MS. @throws StoreInputError */
export function checkWaitOptions(options: WaitOptions): void {
  if (options === null || typeof options !== 'object')
    throw new StoreInputError('wait options', 'must be an object');
  const { timeoutMs } = options;
  if (
    typeof timeoutMs !== 'number' ||
    !Number.isFinite(timeoutMs) ||
    timeoutMs < 0 ||
    timeoutMs > MAX_TIMER_MS
  ) {
    throw new StoreInputError(
      'timeoutMs',
      `must be a number of milliseconds in 0..${MAX_TIMER_MS}, got ${String(timeoutMs)}`,
    );
  }
}

/** `{ outcome }` (checked as an outcome) or `{ released: true }`. @throws StoreInputError */
export function checkResolution(resolution: Resolution): void {
  if (resolution === null || typeof resolution !== 'object') {
    throw new StoreInputError('resolution', 'must be an object');
  }
  if ('outcome' in resolution) {
    checkOutcome(resolution.outcome);
  } else if ((resolution as { released?: unknown }).released !== true) {
    throw new StoreInputError('resolution', 'must be { outcome } or { released: true }');
  }
}
