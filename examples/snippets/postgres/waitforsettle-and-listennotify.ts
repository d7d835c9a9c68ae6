// docs/postgres.md, "waitforsettle-and-listennotify": compiled by npm run typecheck, copied there by scripts/snippets.ts --write.
import { PostgresStore } from '@toolfence/stores/postgres';
import pg from 'pg';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });

// #region waitforsettle-and-listennotify
const store = new PostgresStore({
  pool, // through PgBouncer
  listenClient: async () => {
    const client = new pg.Client({ connectionString: process.env.DIRECT_DATABASE_URL });
    await client.connect();
    return client;
  },
});
// #endregion waitforsettle-and-listennotify

export { store };
