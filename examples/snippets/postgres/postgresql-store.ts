// docs/postgres.md, "postgresql-store": compiled by npm run typecheck, copied there by scripts/snippets.ts --write.

// #region postgresql-store
import pg from 'pg';
import { Guard } from '@toolfence/core';
import { PostgresStore } from '@toolfence/stores/postgres';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
const store = new PostgresStore({ pool }); // schema "toolfence", table "idempotency_records"
await store.ensureSchema(); // once at startup; safe from every process at once
const guard = new Guard({ store });
// ...
await store.close(); // closes the store's LISTEN connection, not your pool
await pool.end();
// #endregion postgresql-store

export { guard };
