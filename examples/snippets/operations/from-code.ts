// docs/operations.md, "from-code": compiled by npm run typecheck, copied there by scripts/snippets.ts --write.
import { guard } from '../support.js';

declare const key: string;

// #region from-code
const page = await guard.list({ states: ['indeterminate'], olderThanMs: 600_000, limit: 100 });
for (const record of page.records) console.log(record.key, record.description, record.error);
// page.cursor: pass it back for the next page (same other options)
await guard.resolve(key, { outcome: { refundId: 'R-1' } }, { by: 'ana', reason: 'in the ledger' });
// Only the record the operator looked at (its holder, from list/inspect); else { status: 'changed', record }:
const seen = page.records[0]!;
await guard.resolve(seen.key, { released: true }, { expect: { fence: seen.fence, owner: seen.owner } });
const history = await guard.resolutions(key);
// #endregion from-code

export { history };
