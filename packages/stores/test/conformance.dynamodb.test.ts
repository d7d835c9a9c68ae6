// DynamoDBStore passes the store conformance suite against dynalite (an in-memory DynamoDB
// emulator in this process; docs/dynamodb.md says where it differs from DynamoDB).
import { describeStoreConformance } from '@toolfence/core/testing';
import { afterAll, beforeAll } from 'vitest';
import {
  type Dynalite,
  dynamoStore,
  randomTableName,
  startDynalite,
} from '../../../test/support/dynalite.js';
import { freePort } from '../../../test/support/redis-server.js';
import { type StallingProxy, startStallingProxy } from '../../../test/support/stalling-proxy.js';

const tableName = randomTableName('conformance');
let emulator: Dynalite;
const proxies: StallingProxy[] = [];

beforeAll(async () => {
  emulator = await startDynalite();
  await dynamoStore(emulator.endpoint, tableName).ensureSchema();
});

afterAll(async () => {
  await Promise.all(proxies.map((proxy) => proxy.close()));
  await emulator?.close();
});

// dynalite takes 3 s for the suite's 16 Mi outcome (48 chunk items of 350 KB, base64 in JSON) on an
// idle core and more than the default 5 s deadline with both cores busy: the stores under test get
// 20 s. The deadline itself is tested by the frozen store below (500 ms) and in
// store.dynamodb.test.ts.
const deadline = { operationTimeoutMs: 20_000 };

describeStoreConformance('DynamoDBStore', () => dynamoStore(emulator.endpoint, tableName, deadline), {
  // Each peer has its own client (its own sockets): the racers' writes really meet in the emulator.
  createPeerStore: () => dynamoStore(emulator.endpoint, tableName, deadline),
  // Nothing listens on this port: every request is refused, and retried by the SDK within the deadline.
  createUnavailableStore: async () =>
    dynamoStore(`http://127.0.0.1:${await freePort()}`, tableName, { operationTimeoutMs: 500 }),
  // The emulator through a proxy that stops forwarding once the store has sent a request.
  createFrozenStore: async () => {
    const proxy = await startStallingProxy(emulator.port);
    proxies.push(proxy);
    const store = dynamoStore(`http://127.0.0.1:${proxy.port}`, tableName, { operationTimeoutMs: 500 });
    await store.get({ tenant: 'frozen', key: 'warm-up' });
    proxy.freeze();
    return store;
  },
  frozenOperationTimeoutMs: 500,
  // dynalite spends 4-10 ms of its one core on each write (it maintains both indexes under a
  // lock): 4 rounds of each race keep the heaviest case (claims against retention expiry, ~3,000
  // operations a round) well inside its 60 s bound on a loaded machine.
  raceRounds: 4,
});
