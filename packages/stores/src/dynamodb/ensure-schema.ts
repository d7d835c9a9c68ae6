// DynamoDBStore.ensureSchema: the table, its two indexes and its TTL attribute, as
// docs/dynamodb.md ("Table") describes them for infrastructure-as-code.
import {
  CreateTableCommand,
  type CreateTableCommandInput,
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { StoreConfigurationError } from '@toolfence/core/store';
import { type Operation, pause, type RecordsTable } from './backend.js';
import { SHARD_INDEX, TENANT_INDEX } from './record-codec.js';

/** What {@link DynamoDBStore.ensureSchema} did. */
export interface DynamoDBEnsureSchemaResult {
  /** True when this call created the table; false when it was there already. */
  readonly created: boolean;
  /**
   * `'enabled'` (TTL on attribute `ttl`, turned on now or before) or `'unsupported'` (the
   * endpoint has no TTL API, as dynalite: expired records are then never deleted, only ignored).
   */
  readonly ttl: 'enabled' | 'unsupported';
}

/** The `CreateTable` input of the store's table (also what docs/dynamodb.md lists). */
export function tableDefinition(tableName: string): CreateTableCommandInput {
  const projection = { ProjectionType: 'INCLUDE' as const, NonKeyAttributes: ['st', 'tool'] };
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST',
    KeySchema: [
      { AttributeName: 'pk', KeyType: 'HASH' },
      { AttributeName: 'sk', KeyType: 'RANGE' },
    ],
    AttributeDefinitions: [
      { AttributeName: 'pk', AttributeType: 'S' },
      { AttributeName: 'sk', AttributeType: 'S' },
      { AttributeName: 'tenant', AttributeType: 'S' },
      { AttributeName: 'lsh', AttributeType: 'S' },
      { AttributeName: 'upd', AttributeType: 'N' },
    ],
    GlobalSecondaryIndexes: [
      {
        IndexName: TENANT_INDEX,
        KeySchema: [
          { AttributeName: 'tenant', KeyType: 'HASH' },
          { AttributeName: 'upd', KeyType: 'RANGE' },
        ],
        Projection: projection,
      },
      {
        IndexName: SHARD_INDEX,
        KeySchema: [
          { AttributeName: 'lsh', KeyType: 'HASH' },
          { AttributeName: 'upd', KeyType: 'RANGE' },
        ],
        Projection: projection,
      },
    ],
  };
}

const SCHEMA_TIMEOUT_MS = 300_000;

async function enableTtl(table: RecordsTable, op: Operation): Promise<'enabled' | 'unsupported'> {
  try {
    const ttl = await op.send<{ TimeToLiveDescription?: { TimeToLiveStatus?: string } }>(
      new DescribeTimeToLiveCommand({ TableName: table.tableName }),
    );
    const status = ttl.TimeToLiveDescription?.TimeToLiveStatus;
    if (status === 'ENABLED' || status === 'ENABLING') return 'enabled';
    await op.send(
      new UpdateTimeToLiveCommand({
        TableName: table.tableName,
        TimeToLiveSpecification: { AttributeName: 'ttl', Enabled: true },
      }),
    );
    return 'enabled';
  } catch (error) {
    if (StoreConfigurationError.isInstance(error) && /UnknownOperation/.test(error.message))
      return 'unsupported';
    throw error;
  }
}

/**
 * Creates the table if it is missing, waits until it and its indexes are ACTIVE, and turns TTL on
 * (attribute `ttl`). Idempotent; safe to call from many processes at once.
 */
export async function ensureSchema(table: RecordsTable): Promise<DynamoDBEnsureSchemaResult> {
  return table.run(
    'ensureSchema',
    async (op) => {
      let created = false;
      try {
        await op.send(new CreateTableCommand(tableDefinition(table.tableName)));
        created = true;
      } catch (error) {
        // "Table already exists" (ResourceInUseException) is a configuration error to the
        // request, and the wanted state here.
        if (!(StoreConfigurationError.isInstance(error) && /ResourceInUse/.test(String(error.message))))
          throw error;
      }
      for (;;) {
        const answer = await op.send<{
          Table?: {
            TableStatus?: string;
            GlobalSecondaryIndexes?: { IndexName?: string; IndexStatus?: string }[];
          };
        }>(new DescribeTableCommand({ TableName: table.tableName }));
        const indexes = answer.Table?.GlobalSecondaryIndexes ?? [];
        for (const name of [TENANT_INDEX, SHARD_INDEX]) {
          if (!indexes.some((index) => index.IndexName === name)) {
            throw new StoreConfigurationError(
              'DynamoDBStore',
              `${table.address} has no index ${name}; create the table as docs/dynamodb.md describes`,
            );
          }
        }
        if (
          answer.Table?.TableStatus === 'ACTIVE' &&
          indexes.every((index) => index.IndexStatus === 'ACTIVE')
        )
          break;
        await pause(200);
      }
      return { created, ttl: await enableTtl(table, op) };
    },
    SCHEMA_TIMEOUT_MS,
  );
}
