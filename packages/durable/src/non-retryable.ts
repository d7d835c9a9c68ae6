import type { CallStopError } from '@toolfence/core';
import type { NonRetryableError } from './step-identity.js';

/**
 * A non-retryable error class of an engine, as `new ErrorClass(message, { cause })`: Workflow
 * DevKit's `FatalError` (message only), Inngest's `NonRetriableError`, Restate's `TerminalError`.
 */
export type NonRetryableErrorClass = new (message: string, options?: { cause?: unknown }) => Error;

/**
 * The {@link NonRetryableError} of an engine whose non-retryable error is a class:
 * `nonRetryableError(FatalError)` (Workflow DevKit), `nonRetryableError(NonRetriableError)`
 * (Inngest), `nonRetryableError(TerminalError)` (Restate). The error gets the stop's message and
 * the stop as its `cause` (set after construction too, for a class that takes a message only).
 * The engine is not imported: pass the class from the engine you installed.
 * @throws TypeError when `errorClass` is not a constructor
 */
export function nonRetryableError(errorClass: NonRetryableErrorClass): NonRetryableError {
  if (typeof errorClass !== 'function') {
    throw new TypeError('nonRetryableError needs the engine error class (e.g. FatalError from "workflow")');
  }
  return (stop: CallStopError) => withCause(new errorClass(stop.message, { cause: stop }), stop);
}

/** Temporal's `ApplicationFailure`, as far as toolfence uses it (its static `create`). */
export interface ApplicationFailureClass {
  create(options: {
    message?: string;
    type?: string;
    nonRetryable?: boolean;
    details?: unknown[];
    cause?: Error;
  }): Error;
}

/**
 * The {@link NonRetryableError} of a Temporal activity: `ApplicationFailure.create({ nonRetryable:
 * true, type, cause })` with the stop's name as `type` (so a retry policy's
 * `nonRetryableErrorTypes` can name it too) and `{ key, tool }` as details. Pass the class from
 * `@temporalio/activity` (or `@temporalio/common`).
 * @throws TypeError when `applicationFailure` has no `create`
 */
export function temporalNonRetryable(applicationFailure: ApplicationFailureClass): NonRetryableError {
  if (typeof applicationFailure?.create !== 'function') {
    throw new TypeError('temporalNonRetryable needs ApplicationFailure from @temporalio/activity');
  }
  return (stop: CallStopError) =>
    applicationFailure.create({
      message: stop.message,
      type: stop.name,
      nonRetryable: true,
      details: [{ key: stop.key, tool: stop.tool, code: stop.code }],
      cause: stop,
    });
}

function withCause(error: Error, stop: CallStopError): Error {
  if (error.cause === undefined) {
    Object.defineProperty(error, 'cause', { value: stop, writable: true, configurable: true });
  }
  return error;
}
