// The store contract's types, as `contract.X` (docs/store-contract.md in @toolfence/core).
import type { CreateTableCommandInput } from '@aws-sdk/client-dynamodb';
import type * as contract from '@toolfence/core/store';
import {
  checkApprovalDecision,
  checkListOptions,
  checkRecordRef,
  checkResolution,
  checkRetentionMs,
  checkTenant,
  checkWaitOptions,
  StoreInputError,
} from '@toolfence/core/store';
import { checkInput } from '../shared/operation-input.js';
import { decideApproval } from './approvals.js';
import { RecordsTable } from './backend.js';
import { claim } from './claim.js';
import { type DynamoDBEnsureSchemaResult, ensureSchema, tableDefinition } from './ensure-schema.js';
import { complete, markIndeterminate, release, renew } from './holder-writes.js';
import { listRecords, readResolutions } from './operator-reads.js';
import { forgetTenant, resolve } from './operator-writes.js';
import { checkDynamoOptions, type DynamoDBStoreOptions } from './options.js';
import { isLive, toRecord } from './record-codec.js';
import { waitForSettle } from './settle-wait.js';

export type { DynamoDBEnsureSchemaResult } from './ensure-schema.js';
export type { DynamoDBStoreOptions } from './options.js';

/**
 * An {@link IdempotencyStore} on one Amazon DynamoDB table (`@aws-sdk/client-dynamodb` v3, an
 * optional peer dependency). docs/dynamodb.md in the repository has the table, the costs and
 * what the offline emulator (dynalite) does differently.
 *
 * - Every ownership decision is ONE conditional write (`PutItem` / `UpdateItem` / `DeleteItem`
 *   with a condition expression): a holder's renew, complete, release and markIndeterminate carry
 *   the holder's fence AND owner, the state and the retention in their condition; a claim first
 *   tries to create the record if the key is free, and a claim that finds a record decides on the
 *   item the refusal returned (`ReturnValuesOnConditionCheckFailure: 'ALL_OLD'`) and writes on
 *   that item's version token. No transaction is used.
 * - The clock: DynamoDB has no clock in its expressions, so the writer's clock decides: each
 *   operation reads `Date.now()` of its process and passes it as a value (a lease deadline
 *   written, `exp > :now` checked). Workers' clocks must agree: a worker whose clock runs `d` ms
 *   ahead takes over (or settles) a lease `d` ms before the holder's deadline. Keep the skew far
 *   below the guard's margin (a lease is renewed every `leaseMs / 3`; docs/dynamodb.md, "Clock").
 * - Retention: the `ttl` attribute (seconds, rounded up) lets DynamoDB delete expired items, late
 *   (up to days); every read treats a record past `expiresAtMs` as gone.
 * - {@link waitForSettle} polls the record with a bounded backoff (25 ms doubling to
 *   `maxPollIntervalMs`, and at the lease deadline).
 * - `list` and `forget` read two global secondary indexes; outcomes above 64 KiB are written in
 *   chunk items before the complete that points to them (DynamoDB items hold at most 400 KB).
 *
 * ```ts
 * import { DynamoDBStore } from '@toolfence/stores/dynamodb';
 * const store = new DynamoDBStore({ clientConfig: { region: 'eu-west-1' }, tableName: 'toolfence' });
 * await store.ensureSchema(); // or create the table as docs/dynamodb.md describes
 * ```
 */
export class DynamoDBStore implements contract.IdempotencyStore {
  readonly specificationVersion = 'v1' as const;
  /** Client-side deadline of each operation, in ms (rule S5), the SDK's own retries included. */
  readonly operationTimeoutMs: number;
  readonly tableName: string;
  private readonly table: RecordsTable;

  /**
   * @throws TypeError when an option cannot be used (see {@link DynamoDBStoreOptions}).
   * @throws RangeError when a duration is out of range. Sends nothing.
   */
  constructor(options: DynamoDBStoreOptions) {
    const settings = checkDynamoOptions(options);
    this.table = new RecordsTable(settings);
    this.operationTimeoutMs = settings.operationTimeoutMs;
    this.tableName = settings.tableName;
  }

  /** The `CreateTable` input of the table this store needs, for infrastructure-as-code. */
  static tableDefinition(tableName: string): CreateTableCommandInput {
    return tableDefinition(tableName);
  }

  /**
   * Creates the table (on-demand capacity, two indexes) if it is missing, waits until it is
   * ACTIVE (up to 5 minutes) and turns TTL on. Idempotent.
   * @throws StoreConfigurationError when a table of that name exists without the indexes.
   * @throws StoreUnavailableError when DynamoDB cannot be reached.
   */
  ensureSchema(): Promise<DynamoDBEnsureSchemaResult> {
    return ensureSchema(this.table);
  }

  /** {@inheritDoc IdempotencyStore.claim} Async, so bad input rejects rather than throws. */
  async claim(ref: contract.RecordRef, options: contract.ClaimOptions): Promise<contract.ClaimResult> {
    checkInput.claim(ref, options);
    return this.table.run('claim', (op) => claim(this.table, op, ref, options));
  }

  /** {@inheritDoc IdempotencyStore.renew} */
  renew(ref: contract.RecordRef, holder: contract.Holder, leaseMs: number): Promise<contract.RenewResult> {
    checkInput.renew(ref, holder, leaseMs);
    return this.table.run('renew', (op) => renew(this.table, op, ref, holder, leaseMs));
  }

  /** {@inheritDoc IdempotencyStore.complete} */
  complete(
    ref: contract.RecordRef,
    holder: contract.Holder,
    outcome: string,
    retentionMs: number,
  ): Promise<contract.CompleteResult> {
    checkInput.complete(ref, holder, outcome, retentionMs);
    return this.table.run('complete', (op) => complete(this.table, op, ref, holder, outcome, retentionMs));
  }

  /** {@inheritDoc IdempotencyStore.release} */
  release(ref: contract.RecordRef, holder: contract.Holder): Promise<contract.ReleaseResult> {
    checkInput.release(ref, holder);
    return this.table.run('release', (op) => release(this.table, op, ref, holder));
  }

  /** {@inheritDoc IdempotencyStore.markIndeterminate} */
  markIndeterminate(
    ref: contract.RecordRef,
    holder: contract.Holder,
    error: contract.RecordedError,
    retentionMs: number,
  ): Promise<contract.MarkIndeterminateResult> {
    checkInput.markIndeterminate(ref, holder, error, retentionMs);
    return this.table.run('markIndeterminate', (op) =>
      markIndeterminate(this.table, op, ref, holder, error, retentionMs),
    );
  }

  /** {@inheritDoc IdempotencyStore.get} */
  get(ref: contract.RecordRef): Promise<contract.IdempotencyRecord | null> {
    checkRecordRef(ref);
    return this.table.run('get', async (op) => {
      const record = await this.table.read(op, ref);
      return isLive(record, Date.now()) ? toRecord(record) : null;
    });
  }

  /** {@inheritDoc IdempotencyStore.resolve} */
  resolve(
    ref: contract.RecordRef,
    resolution: contract.Resolution,
    retentionMs: number,
  ): Promise<contract.ResolveResult> {
    checkRecordRef(ref);
    checkResolution(resolution);
    checkRetentionMs(retentionMs);
    return this.table.run('resolve', (op) => resolve(this.table, op, ref, resolution, retentionMs));
  }

  /**
   * {@inheritDoc IdempotencyStore.decideApproval}
   * Read (strongly consistent), decided, then one conditional write on the version read (or on
   * the key being free); a claim that consumes the approval writes on that version too, so two
   * claims never both use it. Async, so bad input rejects (as the conformance cases await it).
   */
  async decideApproval(
    ref: contract.RecordRef,
    decision: contract.ApprovalDecision,
    retentionMs: number,
  ): Promise<contract.DecideResult> {
    checkRecordRef(ref);
    checkApprovalDecision(decision);
    checkRetentionMs(retentionMs);
    return this.table.run('decideApproval', (op) =>
      decideApproval(this.table, op, ref, decision, retentionMs),
    );
  }

  /**
   * {@inheritDoc IdempotencyStore.list}
   * Read from the table's indexes (eventually consistent on DynamoDB: a record changed in the
   * last moments may be missing from a page); every listed record is read again from the table.
   */
  list(options: contract.ListOptions): Promise<contract.ListPage> {
    checkListOptions(options);
    return this.table.run('list', (op) => listRecords(this.table, op, options));
  }

  /** {@inheritDoc IdempotencyStore.resolutions} */
  resolutions(ref: contract.RecordRef): Promise<readonly contract.ResolutionEntry[]> {
    checkRecordRef(ref);
    return this.table.run('resolutions', (op) => readResolutions(this.table, op, ref));
  }

  /**
   * {@inheritDoc IdempotencyStore.forget}
   * Found through the tenant index (eventually consistent on DynamoDB: a record claimed in the
   * last moments may survive). Bounded by `operationTimeoutMs` like every operation: a tenant
   * with very many records may need several calls.
   */
  forget(options: { readonly tenant: string }): Promise<number> {
    if (options === null || typeof options !== 'object') {
      throw new StoreInputError('forget options', 'must be an object');
    }
    checkTenant(options.tenant);
    return this.table.run('forget', (op) => forgetTenant(this.table, op, options.tenant));
  }

  /**
   * {@inheritDoc IdempotencyStore.waitForSettle}
   *
   * Polls the record (one strongly consistent `GetItem` per read) with a bounded backoff: 25 ms,
   * doubling up to `maxPollIntervalMs` (default 500), and at the holder's lease deadline on the
   * writer's clock; answers `lease_expired` only once a claim would no longer be busy. Each read
   * is bounded by `operationTimeoutMs`. Rejects with `signal.reason` when `signal` aborts.
   */
  async waitForSettle(ref: contract.RecordRef, options: contract.WaitOptions): Promise<contract.WaitResult> {
    checkRecordRef(ref);
    checkWaitOptions(options);
    return waitForSettle(this.table, ref, options);
  }

  /**
   * Aborts the requests in flight and destroys the client if the store made it (never yours).
   * Afterwards every operation throws `StoreUnavailableError`.
   */
  async close(): Promise<void> {
    this.table.close();
  }
}
