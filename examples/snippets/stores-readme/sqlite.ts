// packages/stores/README.md, "sqlite": compiled by npm run typecheck, copied there by scripts/snippets.ts --write.

// #region sqlite
import { Guard } from '@toolfence/core';
import { SQLiteStore } from '@toolfence/stores/sqlite';

const store = new SQLiteStore({ path: '/var/lib/myapp/toolfence.db' }); // a local disk of one host
await store.ensureSchema();
const guard = new Guard({ store });
// #endregion sqlite

export { guard };
