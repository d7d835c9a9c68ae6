// The options of createConsoleHandler, checked once when the handler is made.
import type { IncomingMessage } from 'node:http';
import {
  Guard,
  type IdempotencyStore,
  type KeySecret,
  keySecretProblem,
  type PolicyMap,
} from '@toolfence/core';

/**
 * Who is asking, as `authorize` answers: the operator and the tenants they may see and settle.
 */
export interface ConsoleOperator {
  /**
   * A stable id of the operator (a user id, an email): recorded as the resolution's `by`, and
   * what the form tokens are bound to. A non-empty string of at most `MAX_NAME_LENGTH` code units.
   */
  readonly id: string;
  /** A display name, shown on the page. */
  readonly name?: string;
  /** The tenants this operator may see and settle, or `'*'` for every tenant. */
  readonly tenants: readonly string[] | '*';
}

/**
 * Decides who a request comes from (your session, your SSO proxy's header, your admin auth).
 * Return `null` to refuse the request (401). Throwing answers 500 and reveals nothing.
 */
export type ConsoleAuthorize = (
  request: IncomingMessage,
) => ConsoleOperator | null | undefined | Promise<ConsoleOperator | null | undefined>;

/** Options of {@link createConsoleHandler}. */
export interface ConsoleOptions {
  /** The store to list and read. Optional when `guard` is given (its store is used). */
  readonly store?: IdempotencyStore;
  /**
   * The guard resolutions go through (so they use your codec and emit `tool.resolved` to your
   * `onEvent`). Default: a `new Guard({ store })` with the JSON codec. Its store must be `store`.
   */
  readonly guard?: Guard;
  /**
   * The application's policies by tool name (the map its adapters take). A record whose tool's
   * policy has a `reconcile` probe gets "Ask the provider" on its page: the probe's verdict is
   * shown (nothing is written to the record), and a `happened` / `not_happened` verdict can then
   * settle it through `guard.reconcile` with `apply` (docs/reconcile.md). Default: none, so no
   * record has the button. Only the probes are read.
   */
  readonly policies?: PolicyMap;
  /** Required. Who is asking; see {@link ConsoleAuthorize}. */
  readonly authorize: ConsoleAuthorize;
  /**
   * The path the console is mounted at, e.g. `/admin/toolfence` (default `/`). Links and the
   * cookie path use it; requests are routed by the full URL (Express's `originalUrl`).
   */
  readonly basePath?: string;
  /**
   * The secret form tokens are signed with, at least 32 bytes. Default: random per handler, so
   * set it when several processes serve the console (a form shown by one must verify on another).
   * The factory throws a `TypeError` when it is shorter than 32 bytes.
   */
  readonly csrfSecret?: KeySecret;
  /**
   * The origins a form POST may come from, e.g. `['https://admin.example.com']`. Default: an
   * `Origin` whose host is the request's `Host` header.
   */
  readonly allowedOrigins?: readonly string[];
  /** Mark the form cookie `Secure`. Default: when the request came over TLS or `X-Forwarded-Proto: https`. */
  readonly secureCookie?: boolean;
  /** Largest form body, in bytes (an outcome is pasted into a form). Default 1 MiB. */
  readonly maxBodyBytes?: number;
  /** Records per page, `1..1000`. Default 50. */
  readonly pageSize?: number;
  /** How long a form token stays valid, in milliseconds. Default 12 hours. */
  readonly formTokenMaxAgeMs?: number;
  /** Receives unexpected errors (answered 500 without details). Default `console.error`. */
  readonly onError?: (error: unknown) => void;
}

/** The options after checking and defaults. */
export interface ResolvedConsoleOptions {
  readonly store: IdempotencyStore;
  readonly guard: Guard;
  readonly policies: PolicyMap | undefined;
  readonly authorize: ConsoleAuthorize;
  readonly basePath: string;
  readonly csrfSecret: KeySecret;
  readonly allowedOrigins: readonly string[] | undefined;
  readonly secureCookie: boolean | undefined;
  readonly maxBodyBytes: number;
  readonly pageSize: number;
  readonly formTokenMaxAgeMs: number;
  readonly onError: (error: unknown) => void;
}

const DEFAULT_MAX_BODY_BYTES = 1_048_576;
/** 64 MiB: room for the longest outcome a store takes (16 Mi code units), form-encoded. */
const MAX_BODY_BYTES = 64 * 1_048_576;
const DEFAULT_PAGE_SIZE = 50;
const DEFAULT_FORM_TOKEN_MAX_AGE_MS = 12 * 60 * 60 * 1000;

function positiveInteger(name: string, value: number | undefined, fallback: number, max: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 1 || value > max) {
    throw new TypeError(`createConsoleHandler: ${name} must be a whole number in 1..${max}, got ${value}`);
  }
  return value;
}

/** `/`, or a path starting with `/` without a trailing `/`, of plain URL path characters. */
function checkBasePath(basePath: string | undefined): string {
  if (basePath === undefined || basePath === '' || basePath === '/') return '/';
  if (typeof basePath !== 'string' || !/^(\/[A-Za-z0-9._~-]+)+\/?$/.test(basePath)) {
    throw new TypeError(
      `createConsoleHandler: basePath must look like '/admin/toolfence' (letters, digits, . _ ~ -), got ${String(basePath)}`,
    );
  }
  return basePath.endsWith('/') ? basePath.slice(0, -1) : basePath;
}

function checkOrigins(origins: readonly string[] | undefined): readonly string[] | undefined {
  if (origins === undefined) return undefined;
  if (!Array.isArray(origins) || origins.length === 0) {
    throw new TypeError('createConsoleHandler: allowedOrigins must be a non-empty array of origins');
  }
  return origins.map((origin) => {
    const parsed = URL.canParse(origin) ? new URL(origin) : undefined;
    if (parsed === undefined || parsed.origin !== origin) {
      throw new TypeError(
        `createConsoleHandler: allowedOrigins entries must be origins like 'https://admin.example.com', got ${origin}`,
      );
    }
    return origin;
  });
}

function checkSecret(secret: KeySecret | undefined): KeySecret {
  if (secret === undefined) return crypto.getRandomValues(new Uint8Array(32));
  const problem = keySecretProblem(secret);
  if (problem !== undefined) throw new TypeError(`createConsoleHandler: csrfSecret ${problem}`);
  return typeof secret === 'string' ? secret : Uint8Array.from(secret);
}

function checkPolicies(policies: PolicyMap | undefined): PolicyMap | undefined {
  if (policies === undefined) return undefined;
  if (policies === null || typeof policies !== 'object' || Array.isArray(policies)) {
    throw new TypeError('createConsoleHandler: policies must be an object of policies by tool name');
  }
  return policies;
}

/**
 * Checks the options and fills in defaults.
 * @throws TypeError without `authorize`, without a store, or with a bad option (`policies` not an object).
 */
export function resolveConsoleOptions(options: ConsoleOptions): ResolvedConsoleOptions {
  if (options === null || typeof options !== 'object') {
    throw new TypeError('createConsoleHandler needs options: { store, authorize }');
  }
  if (typeof options.authorize !== 'function') {
    throw new TypeError(
      'createConsoleHandler needs authorize(request): the console settles tool calls, so it never runs without knowing who asks',
    );
  }
  const store = options.store ?? options.guard?.store;
  if (store === undefined) throw new TypeError('createConsoleHandler needs a store (or a guard)');
  if (options.guard !== undefined && options.store !== undefined && options.guard.store !== options.store) {
    throw new TypeError('createConsoleHandler: guard.store is not the store given: pass one of them');
  }
  return {
    store,
    guard: options.guard ?? new Guard({ store }),
    policies: checkPolicies(options.policies),
    authorize: options.authorize,
    basePath: checkBasePath(options.basePath),
    csrfSecret: checkSecret(options.csrfSecret),
    allowedOrigins: checkOrigins(options.allowedOrigins),
    secureCookie: options.secureCookie,
    maxBodyBytes: positiveInteger(
      'maxBodyBytes',
      options.maxBodyBytes,
      DEFAULT_MAX_BODY_BYTES,
      MAX_BODY_BYTES,
    ),
    pageSize: positiveInteger('pageSize', options.pageSize, DEFAULT_PAGE_SIZE, 1000),
    formTokenMaxAgeMs: positiveInteger(
      'formTokenMaxAgeMs',
      options.formTokenMaxAgeMs,
      DEFAULT_FORM_TOKEN_MAX_AGE_MS,
      7 * 24 * 60 * 60 * 1000,
    ),
    onError: options.onError ?? ((error: unknown) => console.error('toolfence console:', error)),
  };
}
