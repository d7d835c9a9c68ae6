// The fake "payments provider" the demo's tools call. It applies effects (refunds, address
// writes) to a ledger that counts them, and can be told to misbehave the way real systems do:
// lose the response after applying the effect (ETIMEDOUT), or have the worker die inside the call.
import type BetterSqlite3 from 'better-sqlite3';
import type { Redis } from 'ioredis';

export type EffectKind = 'refund' | 'address';

/** Where applied effects are counted. In memory by default; a Redis list to share across processes. */
export interface Ledger {
  add(kind: EffectKind, entry: string): Promise<void>;
  count(kind: EffectKind): Promise<number>;
}

export class MemoryLedger implements Ledger {
  private readonly entries = new Map<EffectKind, string[]>();

  async add(kind: EffectKind, entry: string): Promise<void> {
    const list = this.entries.get(kind) ?? [];
    list.push(entry);
    this.entries.set(kind, list);
  }

  async count(kind: EffectKind): Promise<number> {
    return this.entries.get(kind)?.length ?? 0;
  }
}

/** A ledger in Redis lists `<prefix>:ledger:<kind>`, so a child process's effects are counted too. */
export class RedisLedger implements Ledger {
  constructor(
    private readonly client: Redis,
    private readonly prefix: string,
  ) {}

  async add(kind: EffectKind, entry: string): Promise<void> {
    await this.client.rpush(`${this.prefix}:ledger:${kind}`, entry);
  }

  async count(kind: EffectKind): Promise<number> {
    return this.client.llen(`${this.prefix}:ledger:${kind}`);
  }
}

/**
 * A ledger in an SQLite table beside the store's (`<table>_ledger`, one row per effect), so a
 * child process's effects are counted too. The demo creates the table and drops it at exit.
 */
export class SQLiteLedger implements Ledger {
  constructor(
    private readonly db: BetterSqlite3.Database,
    private readonly table: string,
    private readonly ledger: string,
  ) {}

  static create(db: BetterSqlite3.Database, table: string): void {
    db.exec(
      `CREATE TABLE IF NOT EXISTS ${table} (ledger TEXT NOT NULL, kind TEXT NOT NULL, entry TEXT NOT NULL)`,
    );
  }

  async add(kind: EffectKind, entry: string): Promise<void> {
    this.db
      .prepare(`INSERT INTO ${this.table} (ledger, kind, entry) VALUES (?, ?, ?)`)
      .run(this.ledger, kind, entry);
  }

  async count(kind: EffectKind): Promise<number> {
    const row = this.db
      .prepare(`SELECT count(*) AS n FROM ${this.table} WHERE ledger = ? AND kind = ?`)
      .get(this.ledger, kind) as { n: number };
    return row.n;
  }
}

export interface Order {
  readonly orderId: string;
  readonly customer: string;
  readonly totalCents: number;
  readonly status: string;
}

/** Faults to inject; each scenario sets the one it is about. */
export interface Faults {
  /** Apply the refund, then lose this many responses (throw ETIMEDOUT) before one gets through. */
  lostRefundResponses?: number;
  /**
   * Called after an effect was applied, inside the call: the worker "dies" here (never returns).
   * Given the kind of effect, so a scenario can wait until every call of a step got this far.
   */
  dieAfterEffect?: (kind: EffectKind) => Promise<never>;
}

/** The shop's back end: an order lookup, an address book (upsert) and a payments provider. */
export class Provider {
  faults: Faults = {};
  /** Refunds by the idempotency key they were sent with (as Stripe keeps them): what a probe finds. */
  private readonly refundsByKey = new Map<string, { refundId: string; amountCents: number }>();

  constructor(
    readonly ledger: Ledger,
    /** How long one provider call takes (so concurrent calls really overlap). */
    private readonly latencyMs = 15,
  ) {}

  async lookupOrder(orderId: string): Promise<Order> {
    await sleep(this.latencyMs);
    return { orderId, customer: 'Ada Lovelace', totalCents: 4_500, status: 'delivered, damaged' };
  }

  /** The refund sent with `idempotencyKey`, if one was (the provider's own lookup). */
  refundFor(idempotencyKey: string): { refundId: string; amountCents: number } | undefined {
    return this.refundsByKey.get(idempotencyKey);
  }

  /** Upsert: setting the same address twice leaves the same state (one write each time). */
  async setShippingAddress(
    orderId: string,
    address: string,
    note = '',
  ): Promise<{ orderId: string; address: string }> {
    await sleep(this.latencyMs);
    await this.ledger.add('address', `${orderId} -> ${address}${note}`);
    if (this.faults.dieAfterEffect !== undefined) await this.faults.dieAfterEffect('address');
    return { orderId, address };
  }

  /** A refund: every call that reaches here pays money out. */
  async refund(
    orderId: string,
    amountCents: number,
    note = '',
    idempotencyKey?: string,
  ): Promise<{ refundId: string; amountCents: number }> {
    await sleep(this.latencyMs);
    // A refund sent again with the same idempotency key is the first one (nothing paid twice).
    const earlier = idempotencyKey === undefined ? undefined : this.refundsByKey.get(idempotencyKey);
    if (earlier !== undefined) return earlier;
    await this.ledger.add('refund', `${orderId} ${amountCents}${note}`);
    const refundId = `re_${orderId}_${await this.ledger.count('refund')}`;
    if (idempotencyKey !== undefined) this.refundsByKey.set(idempotencyKey, { refundId, amountCents });
    if (this.faults.dieAfterEffect !== undefined) await this.faults.dieAfterEffect('refund');
    if ((this.faults.lostRefundResponses ?? 0) > 0) {
      this.faults.lostRefundResponses = (this.faults.lostRefundResponses ?? 0) - 1;
      // The refund went through; the answer never came back.
      throw Object.assign(new Error(`connect ETIMEDOUT 10.0.0.7:443 (refund ${orderId})`), {
        code: 'ETIMEDOUT',
      });
    }
    return { refundId, amountCents };
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A promise that never settles and holds nothing alive: what a dead worker's call becomes. */
export function never(): Promise<never> {
  return new Promise<never>(() => undefined);
}
