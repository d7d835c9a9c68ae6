// docs/key-spec.md, "api": compiled by npm run typecheck, copied there by scripts/snippets.ts --write.

// #region api
import { argumentsFingerprint, idempotencyKey, keySecretProblem } from '@toolfence/core';

const secret = process.env.TOOLFENCE_KEY_SECRET!; // a string or a Uint8Array, at least 32 bytes
const args = { orderId: 'A-100', amount: 5 };
const key = idempotencyKey({ tenant: 'acme', runId: 'run-1', tool: 'create_order', arguments: args, secret });
const fingerprint = argumentsFingerprint(args, { secret }); // the second argument is optional
const problem = keySecretProblem(secret); // string | undefined, never throws
// #endregion api

export { fingerprint, key, problem };
