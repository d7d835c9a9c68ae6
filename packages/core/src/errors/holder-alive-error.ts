import { ToolfenceError } from './toolfence-error.js';

/** The live holder a {@link HolderAliveError} names, as the store's record shows it. */
export interface LiveHolder {
  /** The idempotency key. */
  readonly key: string;
  readonly tenant: string;
  /** The tool of the call. */
  readonly tool: string;
  /** Its fencing token. */
  readonly fence: number;
  /** Opaque id of the attempt still running the body. */
  readonly owner: string;
  /** When that attempt claimed the key (epoch ms, store clock), when the store says. */
  readonly claimedAtMs?: number;
  /** Its lease deadline (epoch ms, store clock): renewed while its body runs. */
  readonly leaseExpiresAtMs: number;
}

/**
 * An operator tried to resolve or release a record whose holder is alive: the record is
 * `in_progress` and its lease is live by the store's clock, so its body may still take effect
 * (releasing it let a retry pay a second time while the first body still ran).
 * Nothing was changed. Wait until it settles (its outcome is then recorded, or it turns
 * indeterminate), or, if the holder is known to be stuck, force the decision with a reason
 * (`force: { reason }`), which is kept in the record's resolution history.
 */
export class HolderAliveError extends ToolfenceError {
  /** The idempotency key of the record. */
  readonly key: string;
  readonly tenant: string;
  /** The tool whose call is still running. */
  readonly tool: string;
  /** The live holder's fencing token. */
  readonly fence: number;
  /** The live holder's owner id (`--owner` in the CLI). */
  readonly owner: string;
  /** When the live holder claimed the key (epoch ms, store clock), when the store says. */
  readonly claimedAtMs: number | undefined;
  /** Its lease deadline (epoch ms, store clock) when the store refused. */
  readonly leaseExpiresAtMs: number;
  constructor(holder: LiveHolder) {
    const since =
      holder.claimedAtMs === undefined ? '' : ` since ${new Date(holder.claimedAtMs).toISOString()}`;
    super(
      'HOLDER_ALIVE',
      `Tool "${holder.tool}" (idempotency key ${holder.key}) is still running on ${holder.owner}${since}, ` +
        `lease live until ${new Date(holder.leaseExpiresAtMs).toISOString()}: its body may still take effect, ` +
        'so it was not resolved (nothing changed). Wait until it settles, or force it with a reason.',
    );
    this.name = 'HolderAliveError';
    this.key = holder.key;
    this.tenant = holder.tenant;
    this.tool = holder.tool;
    this.fence = holder.fence;
    this.owner = holder.owner;
    this.claimedAtMs = holder.claimedAtMs;
    this.leaseExpiresAtMs = holder.leaseExpiresAtMs;
  }
  static override isInstance(error: unknown): error is HolderAliveError {
    return ToolfenceError.hasCode(error, 'HOLDER_ALIVE');
  }
}
