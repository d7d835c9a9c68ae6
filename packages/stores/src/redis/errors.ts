import { StoreConfigurationError, StoreInputError, StoreUnavailableError } from '@toolfence/core/store';
import { UnexpectedReplyError } from './record-codec.js';

/**
 * Redis error replies (the first word of the message) that mean "not now": the server is
 * loading, busy with a script, without a master, the cluster is resharding or down, or out of
 * memory / unable to persist. A later try may succeed: `StoreUnavailableError`.
 */
const unavailableReplies = new Set([
  'LOADING',
  'BUSY',
  'MASTERDOWN',
  'CLUSTERDOWN',
  'TRYAGAIN',
  'MOVED',
  'ASK',
  'OOM',
  'MISCONF',
  'NOREPLICAS',
  'UNBLOCKED',
]);

/** Error replies from the store's own scripts refusing a value (statements/includes/01-record.lua). */
const inputReplyPrefix = 'TOOLFENCE_INPUT';

/** `RedisStore at host:port/db` (never credentials), for messages. */
export type RedisSite = string;

function replyWord(error: Error): string {
  return error.message.split(/\s/, 1)[0] ?? '';
}

function isReplyError(error: unknown): error is Error {
  return error instanceof Error && error.name === 'ReplyError';
}

/** Socket errors raised before a connection exists, and ioredis refusing to queue a command. */
const notSentCodes = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

function neverSent(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && notSentCodes.has(code)) return true;
  return error instanceof Error && /enableOfflineQueue options is false/.test(error.message);
}

/**
 * Maps a failure of one Redis exchange to what the store throws (rules S1, S5, G6):
 * - a connection failure, a timeout, or a "not now" reply (LOADING, BUSY, CLUSTERDOWN, OOM, ...)
 *   → `StoreUnavailableError`;
 * - a script refusing a value → `StoreInputError`;
 * - any other error reply (a script error, WRONGTYPE on the store's key, NOPERM, READONLY, NOAUTH,
 *   an unknown command on a Redis older than 6.2) or a reply no script sends → a bug or a
 *   misconfiguration that no retry fixes: `StoreConfigurationError`.
 * The original error is always the `cause`.
 */
export function toRedisStoreError(operation: string, error: unknown, site: RedisSite): Error {
  if (
    StoreUnavailableError.isInstance(error) ||
    StoreInputError.isInstance(error) ||
    StoreConfigurationError.isInstance(error)
  ) {
    return error as Error;
  }
  if (error instanceof UnexpectedReplyError) {
    return new StoreConfigurationError(
      site,
      `${operation}: ${error.message} (a store of another version on the same prefix, or a bug)`,
      { cause: error },
    );
  }
  if (isReplyError(error)) {
    const word = replyWord(error);
    if (word === inputReplyPrefix) {
      return new StoreInputError('value', `${site} refused a value of ${operation}: ${error.message}`, {
        cause: error,
      });
    }
    if (!unavailableReplies.has(word)) {
      return new StoreConfigurationError(site, `${operation} was refused by Redis: ${error.message}`, {
        cause: error,
      });
    }
    // Redis answered "not now" instead of running the command: nothing was applied.
    return new StoreUnavailableError(operation, `${site}: ${error.message}`, {
      cause: error,
      outcome: 'not-applied',
    });
  }
  const reason = error instanceof Error ? error.message : String(error);
  // A connection that ended with the command in flight may have run it.
  return new StoreUnavailableError(operation, `${site}: ${reason}`, {
    cause: error,
    outcome: neverSent(error) ? 'not-applied' : 'unknown',
  });
}

/**
 * `host:port/db` of an ioredis client (Sentinel: the master name and the sentinels; Cluster: the
 * startup nodes). Never the user name or the password.
 */
export function describeRedisAddress(client: unknown): string {
  const source = client as {
    isCluster?: boolean;
    startupNodes?: unknown[];
    options?: {
      host?: string;
      port?: number;
      db?: number;
      path?: string;
      sentinels?: unknown[];
      name?: string;
    };
  };
  if (source.isCluster === true) {
    const nodes = (source.startupNodes ?? []).map((node) => {
      if (typeof node === 'string') return stripCredentials(node);
      if (typeof node === 'number') return `127.0.0.1:${node}`;
      const { host = '127.0.0.1', port = 6379 } = (node ?? {}) as { host?: string; port?: number };
      return `${host}:${port}`;
    });
    return `cluster ${nodes.join(',') || '(no startup nodes)'}`;
  }
  const options = source.options ?? {};
  const db = options.db ?? 0;
  if (Array.isArray(options.sentinels) && options.sentinels.length > 0) {
    const sentinels = options.sentinels.map((node) => {
      const { host = '127.0.0.1', port = 26379 } = (node ?? {}) as { host?: string; port?: number };
      return `${host}:${port}`;
    });
    return `sentinel master ${options.name ?? '?'} via ${sentinels.join(',')}/${db}`;
  }
  if (options.path) return `${options.path}/${db}`;
  return `${options.host ?? '127.0.0.1'}:${options.port ?? 6379}/${db}`;
}

function stripCredentials(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname}:${parsed.port || 6379}`;
  } catch {
    return url.replace(/^[^@]*@/, '');
  }
}
