// docs/operations.md, "descriptions": compiled by npm run typecheck, copied there by scripts/snippets.ts --write.
import { store } from '../support.js';

declare function redact(text: string): string;

// #region descriptions
import { Guard } from '@toolfence/core';

new Guard({
  store,
  // The message to record for an error a body threw (or an abort reason): redact it, or pick a safe field.
  describeError: (error: unknown) => ({ message: redact(String((error as Error).message)) }),
});
// #endregion descriptions
