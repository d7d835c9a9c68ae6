// docs/sqlite.md, "sqlitestore": compiled by npm run typecheck, copied there by scripts/snippets.ts --write.

// #region sqlitestore
import { Guard } from '@toolfence/core';
import { SQLiteStore } from '@toolfence/stores/sqlite';

const store = new SQLiteStore({ path: '/var/lib/myapp/toolfence.db' });
await store.ensureSchema(); // once at startup; safe from several processes at once
const guard = new Guard({ store });
// #endregion sqlitestore

export { guard };
