// docs/operations.md, "probes-module": compiled by npm run typecheck, copied there by scripts/snippets.ts --write.
import { Idempotency, type PolicyMap } from '@toolfence/core';

declare const payments: { findByIdempotencyKey(key: string): Promise<{ id: string } | undefined> };

// #region probes-module
// probes.ts, built to probes.js: what `toolfence reconcile --probes ./probes.js` loads.
export const policies: PolicyMap = {
  charge: {
    kind: Idempotency.EFFECTFUL,
    reconcile: async ({ idempotencyKey }) => {
      const found = await payments.findByIdempotencyKey(idempotencyKey);
      return found === undefined ? { happened: false } : { happened: true, outcome: { chargeId: found.id } };
    },
  },
};
// #endregion probes-module
