// toolfence's DynamoDBStore against Powertools' DynamoDB persistence layer on the same emulator.

import { IdempotencyConfig, makeIdempotent } from '@aws-lambda-powertools/idempotency';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { Guard } from '@toolfence/core';
import { DynamoDBStore } from '@toolfence/stores/dynamodb';
import { emulatorConfig, randomTableName, startDynalite } from '../../test/support/dynalite.js';
import { type Row, row } from '../lib/report.js';
import { interleave, RoundFigures, runBatch } from '../lib/stats.js';
import { guardedCalls } from '../lib/store-latency.js';
import { outcome100, scaled, toolArguments } from '../lib/workloads.js';

/** The lease both sides get: toolfence's leaseMs, the peer's remaining Lambda time. */
const leaseMs = 30_000;

/** A client that counts the requests (SDK attempts) it sends. */
function countedClient(endpoint: string): { client: DynamoDBClient; sent: () => number } {
  const client = new DynamoDBClient(emulatorConfig(endpoint));
  let sent = 0;
  client.middlewareStack.add(
    (next) => async (args) => {
      sent++;
      return next(args);
    },
    { step: 'finalizeRequest', name: 'countRequests', priority: 'low' },
  );
  return { client, sent: () => sent };
}

/**
 * `peer-dynamodb`: the first-call and repeat workloads of `peer`, on dynalite (a child process),
 * through DynamoDBStore and through `@aws-lambda-powertools/idempotency` 2.35 with its
 * `DynamoDBPersistenceLayer` (its own table, key `id`), interleaved round by round; then requests
 * per call on each side. The emulator is the bottleneck of both (4–10 ms per write on one core,
 * docs/dynamodb.md): the rows compare the two designs' requests, not DynamoDB's latency.
 */
export async function peerDynamoSuite(): Promise<Row[]> {
  const emulator = await startDynalite();
  const ours = countedClient(emulator.endpoint);
  const theirs = countedClient(emulator.endpoint);
  const store = new DynamoDBStore({ client: ours.client, tableName: randomTableName('bench') });
  try {
    await store.ensureSchema();
    const peerTable = randomTableName('powertools');
    await theirs.client.send(
      new CreateTableCommand({
        TableName: peerTable,
        BillingMode: 'PAY_PER_REQUEST',
        KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
        AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' }],
      }),
    );
    const guarded = guardedCalls(new Guard({ store }));
    const config = new IdempotencyConfig({ expiresAfterSeconds: 86_400 });
    config.registerLambdaContext({
      getRemainingTimeInMillis: () => leaseMs,
      functionName: 'bench',
    } as unknown as Parameters<IdempotencyConfig['registerLambdaContext']>[0]);
    const persistenceStore = new DynamoDBPersistenceLayer({
      tableName: peerTable,
      awsSdkV3Client: theirs.client,
    });
    const peerTool = makeIdempotent(async (input: Record<string, unknown>) => outcome100(Number(input.id)), {
      persistenceStore,
      config,
    });
    const peerRun = `bench-${Date.now()}`;
    const peerCall = (id: number) => peerTool({ ...toolArguments(100, id), runId: peerRun, id });
    const repeatPool = 1_000;
    await guarded.prepare();
    await runBatch(32, repeatPool, (id) => peerCall(id));
    let nextPeerFirst = repeatPool;
    const peer = {
      first: () => peerCall(nextPeerFirst++),
      repeat: (index: number) => peerCall(index % repeatPool),
    };
    const replay = await peer.repeat(7);
    if (JSON.stringify(replay) !== JSON.stringify(outcome100(7))) {
      throw new Error(`the peer replayed ${JSON.stringify(replay)} instead of the recorded outcome`);
    }

    const rows: Row[] = [];
    const rounds = scaled(5);
    for (const concurrency of [1, 32]) {
      const total = scaled(concurrency === 1 ? 100 : 1_000);
      const figures = {
        oursFirst: new RoundFigures(),
        peerFirst: new RoundFigures(),
        oursRepeat: new RoundFigures(),
        peerRepeat: new RoundFigures(),
      };
      await interleave(rounds, [
        { figures: figures.oursFirst, run: () => runBatch(concurrency, total, () => guarded.first()) },
        { figures: figures.peerFirst, run: () => runBatch(concurrency, total, () => peer.first()) },
        {
          figures: figures.oursRepeat,
          run: () => runBatch(concurrency, total, (index) => guarded.repeat(index)),
        },
        {
          figures: figures.peerRepeat,
          run: () => runBatch(concurrency, total, (index) => peer.repeat(index)),
        },
      ]);
      const label = (what: string) => `peer-dynamodb: ${what}, c=${concurrency} (vs Powertools, dynalite)`;
      if (concurrency === 1) {
        rows.push(
          row(label('first call p50'), 'ms', figures.oursFirst.p50, figures.peerFirst.p50),
          row(label('repeat p50'), 'ms', figures.oursRepeat.p50, figures.peerRepeat.p50),
        );
      } else {
        rows.push(
          row(
            label('first call throughput'),
            'calls/s',
            figures.oursFirst.throughput,
            figures.peerFirst.throughput,
          ),
          row(
            label('repeat throughput'),
            'calls/s',
            figures.oursRepeat.throughput,
            figures.peerRepeat.throughput,
          ),
        );
      }
    }

    const countedCalls = 50;
    const perCall = async (sent: () => number, operation: (index: number) => Promise<unknown>) => {
      const before = sent();
      for (let index = 0; index < countedCalls; index++) await operation(index);
      return (sent() - before) / countedCalls;
    };
    rows.push(
      row(
        'peer-dynamodb: requests per first call (vs Powertools)',
        'requests',
        await perCall(ours.sent, () => guarded.first()),
        await perCall(theirs.sent, () => peer.first()),
      ),
      row(
        'peer-dynamodb: requests per repeat on dynalite (vs Powertools)',
        'requests',
        await perCall(ours.sent, (i) => guarded.repeat(i)),
        await perCall(theirs.sent, (i) => peer.repeat(i)),
      ),
    );
    return rows;
  } finally {
    await store.close();
    ours.client.destroy();
    theirs.client.destroy();
    await emulator.close();
  }
}
