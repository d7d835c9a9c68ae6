// How the PostgresStore sends its statements: rendered for its table, named (server-side
// prepared) while the server keeps them, bounded by operationTimeoutMs, errors classified.
import { createHash } from 'node:crypto';
import { StoreUnavailableError } from '@toolfence/core/store';
import { type FailureSite, toStoreError } from './errors.js';
import type { PostgresNames } from './names.js';
import { renderSql } from './names.js';
import { withDeadline } from './operation-deadline.js';
import type { PostgresQueryable } from './options.js';
import type { Row } from './record-codec.js';
import { statements } from './statements.js';

type QueryResultLike = { rows: unknown[]; rowCount?: number | null };

/** Every statement of sql/, rendered for one table. */
export type PostgresSql = { readonly [K in keyof typeof statements]: string };

/** What a {@link StatementRunner} needs to know. */
export interface StatementRunnerSettings {
  readonly pool: PostgresQueryable;
  readonly names: PostgresNames;
  readonly site: FailureSite;
  readonly operationTimeoutMs: number;
  /** pg's Pool, Client or PoolClient: statements are sent as config objects with `query_timeout`. */
  readonly pgQueryable: boolean;
  /** Send named statements (see PostgresStoreOptions.preparedStatements). */
  readonly preparedStatements: boolean;
}

/**
 * 26000 (invalid_sql_statement_name: the server has no statement of that name, e.g. behind a
 * transaction pooler that does not track prepared statements, or after DISCARD ALL) and 42P05
 * (duplicate_prepared_statement). Both are raised before the statement executes.
 */
function isUnknownPreparedStatement(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === '26000' || code === '42P05';
}

export class StatementRunner {
  /** The store's statements, rendered for its table. */
  readonly sql: PostgresSql;
  /** Prepared-statement name of each rendered statement text. */
  private readonly statementNames = new Map<string, string>();
  private prepared: boolean;
  private closed = false;

  constructor(private readonly settings: StatementRunnerSettings) {
    this.sql = Object.fromEntries(
      Object.entries(statements).map(([name, text]) => [name, renderSql(text, settings.names.placeholders)]),
    ) as PostgresSql;
    for (const text of Object.values(this.sql)) {
      // Named by the rendered text (which includes the table), so stores of different tables
      // sharing one pool never reuse a name for another statement.
      this.statementNames.set(
        text,
        `toolfence_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`,
      );
    }
    this.prepared = settings.preparedStatements;
  }

  /** After this every operation throws `StoreUnavailableError`. */
  close(): void {
    this.closed = true;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  assertOpen(operation: string): void {
    if (this.closed) {
      throw new StoreUnavailableError(operation, `${this.settings.site.store}: the store is closed`, {
        outcome: 'not-applied',
      });
    }
  }

  /** Bounds `pending` by operationTimeoutMs (see operation-deadline.ts). */
  withDeadline<T>(operation: string, pending: Promise<T>, onLate?: (value: T) => void): Promise<T> {
    const { operationTimeoutMs, site } = this.settings;
    return withDeadline(operation, pending, operationTimeoutMs, site.store, onLate);
  }

  async query(operation: string, text: string, values: unknown[]): Promise<QueryResultLike> {
    this.assertOpen(operation);
    try {
      return await this.withDeadline(operation, this.send(text, values));
    } catch (error) {
      throw toStoreError(operation, error, this.settings.site);
    }
  }

  async queryOne(operation: string, text: string, values: unknown[]): Promise<Row | undefined> {
    const result = await this.query(operation, text, values);
    return result.rows[0] as Row | undefined;
  }

  /** One statement: named when prepared statements are on, with pg's `query_timeout` for pg. */
  private async send(text: string, values: unknown[]): Promise<QueryResultLike> {
    const { pool, pgQueryable, operationTimeoutMs } = this.settings;
    const name = this.prepared ? this.statementNames.get(text) : undefined;
    if (!pgQueryable && name === undefined) return pool.query(text, values);
    const config = {
      ...(name === undefined ? {} : { name }),
      text,
      values,
      // pg fails the statement at this deadline and pg's Pool then destroys the connection
      // (release(err)) instead of handing a connection with a statement in flight to the next call.
      ...(pgQueryable ? { query_timeout: operationTimeoutMs } : {}),
    };
    const queryConfig = (pool as unknown as { query(config: object): Promise<QueryResultLike> }).query.bind(
      pool,
    );
    try {
      return await queryConfig(config);
    } catch (error) {
      if (name === undefined || !isUnknownPreparedStatement(error)) throw error;
      // The server lost (or never kept) what this connection prepared: nothing ran. From now
      // on every statement is sent unnamed.
      this.prepared = false;
      const { name: _name, ...unnamed } = config as typeof config & { name?: string };
      return pgQueryable ? await queryConfig(unnamed) : await pool.query(text, values);
    }
  }
}
