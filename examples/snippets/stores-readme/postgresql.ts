// packages/stores/README.md, "postgresql": compiled by npm run typecheck, copied there by scripts/snippets.ts --write.

// #region postgresql
import { Guard } from '@toolfence/core';
import { PostgresStore } from '@toolfence/stores/postgres';
import pg from 'pg';

const store = new PostgresStore({ pool: new pg.Pool({ connectionString: process.env.DATABASE_URL }) });
await store.ensureSchema(); // once at startup: creates or migrates the table; safe from many processes
const guard = new Guard({ store });

// #endregion postgresql
export { guard };
