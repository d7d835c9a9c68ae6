// The DynamoDBStore's options (public: re-exported by index.ts) and their checks.
import { DynamoDBClient, type DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';

/** Options of {@link DynamoDBStore}. Give exactly one of `client` and `clientConfig`. */
export interface DynamoDBStoreOptions {
  /**
   * Your DynamoDB client (`@aws-sdk/client-dynamodb` v3). The store never destroys it. Its
   * retries (`maxAttempts`, default 3 in the SDK) and its request handler's timeouts are yours:
   * every operation is still cut off at {@link DynamoDBStoreOptions.operationTimeoutMs} (the
   * request is aborted), whatever the SDK is doing.
   */
  readonly client?: DynamoDBClient;
  /**
   * The configuration of a client the store makes and destroys on `close()`. Unless you set
   * them, the store sets `maxAttempts: 3` and a request handler whose `requestTimeout` is
   * `operationTimeoutMs` and `connectionTimeout` at most 1000 ms, so that the SDK's own retries
   * happen inside the store's deadline.
   */
  readonly clientConfig?: DynamoDBClientConfig;
  /** The table (create it with `ensureSchema()`, or as docs/dynamodb.md describes). */
  readonly tableName: string;
  /**
   * Client-side deadline of one operation in milliseconds (rule S5), the SDK's retries and a
   * claim's re-reads included: after it the operation's request is aborted and it fails with
   * `StoreUnavailableError` naming the operation, the table and the endpoint. Default 5000. A
   * write that timed out may still land later (the fence makes a late claim or result harmless).
   * `waitForSettle` answers within its `timeoutMs` plus this.
   */
  readonly operationTimeoutMs?: number;
  /**
   * The longest pause between two reads of `waitForSettle`, in milliseconds (it starts at 25 and
   * doubles up to this; it also wakes at the holder's lease deadline). Default 500.
   */
  readonly maxPollIntervalMs?: number;
}

const DEFAULT_OPERATION_TIMEOUT_MS = 5000;
const DEFAULT_MAX_POLL_INTERVAL_MS = 500;

export interface DynamoSettings {
  readonly client: DynamoDBClient;
  /** Whether `close()` destroys the client (the store made it). */
  readonly ownsClient: boolean;
  readonly tableName: string;
  readonly operationTimeoutMs: number;
  readonly maxPollIntervalMs: number;
  /** Where the table is, for error messages: the table name and the endpoint or region, never credentials. */
  readonly address: string;
}

function assertMs(name: string, value: number): void {
  if (!Number.isSafeInteger(value) || value <= 0 || value > 2_147_483_647) {
    throw new RangeError(`${name} must be a whole number of milliseconds in 1..2147483647; got ${value}`);
  }
}

function describeEndpoint(config: DynamoDBClientConfig | undefined): string | undefined {
  const endpoint = config?.endpoint;
  if (typeof endpoint === 'string') {
    try {
      const url = new URL(endpoint);
      return `${url.protocol}//${url.host}`;
    } catch {
      return undefined;
    }
  }
  if (typeof config?.region === 'string') return `region ${config.region}`;
  return undefined;
}

/**
 * @throws TypeError when neither or both of `client` and `clientConfig` are given, or the table
 *   name is not 3..255 characters of `[A-Za-z0-9_.-]` (DynamoDB's rule).
 * @throws RangeError when a duration is not a whole number of ms in 1..2^31-1.
 */
export function checkDynamoOptions(options: DynamoDBStoreOptions): DynamoSettings {
  if (options === null || typeof options !== 'object') throw new TypeError('DynamoDBStore needs options');
  if ((options.client === undefined) === (options.clientConfig === undefined)) {
    throw new TypeError('DynamoDBStore needs exactly one of client and clientConfig');
  }
  const { tableName } = options;
  if (typeof tableName !== 'string' || !/^[A-Za-z0-9_.-]{3,255}$/.test(tableName)) {
    throw new TypeError(
      `tableName must be 3..255 characters of A-Z a-z 0-9 _ . - (DynamoDB's rule); got ${JSON.stringify(tableName)}`,
    );
  }
  const operationTimeoutMs = options.operationTimeoutMs ?? DEFAULT_OPERATION_TIMEOUT_MS;
  assertMs('operationTimeoutMs', operationTimeoutMs);
  const maxPollIntervalMs = options.maxPollIntervalMs ?? DEFAULT_MAX_POLL_INTERVAL_MS;
  assertMs('maxPollIntervalMs', maxPollIntervalMs);
  const config = options.clientConfig;
  const client =
    options.client ??
    new DynamoDBClient({
      maxAttempts: 3,
      requestHandler: {
        requestTimeout: operationTimeoutMs,
        connectionTimeout: Math.min(operationTimeoutMs, 1000),
      },
      ...config,
    });
  const where = describeEndpoint(config);
  return {
    client,
    ownsClient: options.client === undefined,
    tableName,
    operationTimeoutMs,
    maxPollIntervalMs,
    address: `DynamoDB table ${tableName}${where === undefined ? '' : ` at ${where}`}`,
  };
}
