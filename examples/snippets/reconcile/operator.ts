// docs/reconcile.md, "operator": compiled by npm run typecheck, copied there by scripts/snippets.ts --write.
import type { Guard, PolicyMap } from '@toolfence/core';

declare const guard: Guard;
declare const policies: PolicyMap;
declare const key: string;

// #region operator
const asked = await guard.reconcile(key, { policies }); // only asks
const applied = await guard.reconcile(key, { policies, apply: true }); // settles by the verdict
// #endregion operator
console.log(asked.verdict, applied.applied);
