// docs/postgres.md, "dropped-connections-what-the-store-handl": compiled by npm run typecheck, copied there by scripts/snippets.ts --write.
import pg from 'pg';

declare const log: { warn(fields: object, message: string): void };

// #region dropped-connections-what-the-store-handl
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
pool.on('error', (error) => log.warn({ error }, 'idle PostgreSQL connection lost'));
// #endregion dropped-connections-what-the-store-handl
