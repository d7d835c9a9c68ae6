// The set-up fault of a fenced tool (no run id for a 'run'-scoped policy): marked with a registered
// symbol, so stopOnIndeterminate (and another copy of the package) can tell it from the model's
// errors and end the run with it.
import { KeyDerivationError } from '@toolfence/core';

/**
 * Marks a set-up fault (no run id for a run-scoped policy): not the model's to fix, so
 * {@link stopOnIndeterminate} ends the run with it (generateText rejects) rather than let the
 * model read it. A registered symbol, so another copy of the package recognises it.
 */
const SETUP_FAULT = Symbol.for('toolfence.setupFault');

/** True for the error of a guarded call that had no run id (a set-up fault, not the model's). */
export function isSetupFault(error: unknown): error is KeyDerivationError {
  return (
    KeyDerivationError.isInstance(error) &&
    (error as unknown as Record<symbol, unknown>)[SETUP_FAULT] === true
  );
}

export function missingRunIdError(toolName: string): KeyDerivationError {
  const error = new KeyDerivationError(
    toolName,
    "no run id for a 'run'-scoped key. Pass the conversation's id to fenceTools(tools, { runId }) " +
      '(a string, or `(options, toolName) => string`), or give it per call in the execution context ' +
      'with toolfenceContext({ runId }) (AI SDK 6: experimental_context; AI SDK 7: toolsContext), ' +
      "or give the policy scope: 'tenant' for a key that holds across runs",
  );
  Object.defineProperty(error, SETUP_FAULT, { value: true });
  return error;
}
