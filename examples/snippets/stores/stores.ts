// The code blocks of docs/stores.md.

// #region stores
import { DynamoDBStore } from '@toolfence/stores/dynamodb';
import { PostgresStore } from '@toolfence/stores/postgres';
import { RedisStore } from '@toolfence/stores/redis';
import { SQLiteStore } from '@toolfence/stores/sqlite';
import { Redis } from 'ioredis';
import pg from 'pg';

const redisStore = new RedisStore({ client: new Redis(process.env.REDIS_URL!) });
const postgresStore = new PostgresStore({
  pool: new pg.Pool({ connectionString: process.env.DATABASE_URL }),
});
await postgresStore.ensureSchema(); // once at startup; safe from many processes at once
const sqliteStore = new SQLiteStore({ path: '/var/lib/myapp/toolfence.db' }); // a local disk of one host
await sqliteStore.ensureSchema();
const dynamoStore = new DynamoDBStore({ clientConfig: { region: 'eu-west-1' }, tableName: 'toolfence' });
await dynamoStore.ensureSchema(); // or create the table with your infrastructure code (docs/dynamodb.md)

// #endregion stores

export { dynamoStore, redisStore, sqliteStore };
