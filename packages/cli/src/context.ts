// What every command shares: where the store is, the tenant, the output, and a Guard on the store
// (resolutions go through `guard.resolve`, so each one is audited and emits `tool.resolved`).
import { Guard, type GuardEvent, type IdempotencyStore, StoreConfigurationError } from '@toolfence/core';
import { checkRecordRef } from '@toolfence/core/store';
import { CliError, ExitCode } from './exit-codes.js';
import { type Access, type OpenStore, openStore, type StoreNamespace } from './open-store.js';
import type { Output, Place } from './output.js';
import type { Masker } from './secrets.js';
import { parseStoreLocation, type StoreLocation } from './store-url.js';

/** The global options, as commander gives them. */
export interface GlobalOptions {
  readonly store?: string;
  readonly prefix?: string;
  readonly schema?: string;
  readonly table?: string;
  readonly tenant?: string;
  readonly json?: boolean;
}

export interface CommandContext {
  readonly tenant: string;
  readonly json: boolean;
  readonly output: Output;
  /** Events the guard emitted while the command ran. */
  readonly events: GuardEvent[];
  /** Where the command reads: printed with every "nothing found". */
  readonly place: Place;
  /** The open store's namespace probe and options (open-store.ts). */
  readonly opened: OpenStore;
}

/** The masking of every printed line, fed with the store's secrets once its location is parsed. */
export interface LocationHolder {
  location: StoreLocation | undefined;
  readonly masker: Masker;
}

export type Work = (store: IdempotencyStore, guard: Guard, context: CommandContext) => Promise<number>;

/**
 * How a command finds and opens its store: `--store` parsed, then opened. The CLI's own is
 * {@link DEFAULT_OPENER}; a test process that keeps its records in memory passes its own, since no
 * other process can reach a MemoryStore.
 */
export interface StoreOpener {
  readonly parse: (given: string | undefined) => StoreLocation;
  readonly open: (location: StoreLocation, namespace: StoreNamespace, access: Access) => Promise<OpenStore>;
}

export const DEFAULT_OPENER: StoreOpener = { parse: parseStoreLocation, open: openStore };

/** The tenant of the command, checked. @throws CliError (usage) */
export function tenantOf(options: GlobalOptions, env: NodeJS.ProcessEnv): string {
  const tenant = options.tenant ?? (env.TOOLFENCE_TENANT || 'default');
  try {
    checkRecordRef({ tenant, key: 'k' });
  } catch (error) {
    throw new CliError(`--tenant: ${(error as Error).message}`, ExitCode.usage);
  }
  return tenant;
}

/**
 * Checks every option, opens the store (read-only for `access: 'read'` where the store can),
 * runs `work` with a guard on it, and always closes the store.
 */
export async function withStore(
  options: GlobalOptions,
  env: NodeJS.ProcessEnv,
  output: Output,
  holder: LocationHolder,
  work: Work,
  access: Access = 'write',
  opener: StoreOpener = DEFAULT_OPENER,
): Promise<number> {
  const location = opener.parse(options.store ?? env.TOOLFENCE_STORE);
  holder.location = location;
  holder.masker.add(location.target);
  const namespace: StoreNamespace = {
    ...(options.prefix === undefined ? {} : { prefix: options.prefix }),
    ...(options.schema === undefined ? {} : { schema: options.schema }),
    ...(options.table === undefined ? {} : { table: options.table }),
  };
  const tenant = tenantOf(options, env);
  const opened = await opener.open(location, namespace, access);
  const events: GuardEvent[] = [];
  const place = { store: location.shown, namespace: opened.namespace, tenant };
  try {
    const guard = new Guard({ store: opened.store, tenant, onEvent: (event) => events.push(event) });
    return await work(opened.store, guard, {
      tenant,
      json: options.json === true,
      output,
      events,
      place,
      opened,
    });
  } catch (error) {
    // A missing schema or table, a file that is no toolfence database: say where it looked.
    if (StoreConfigurationError.isInstance(error)) {
      throw new CliError(
        `${(error as Error).name}: ${(error as Error).message} (read ${place.store} ${place.namespace})`,
        ExitCode.storeUnavailable,
      );
    }
    throw error;
  } finally {
    await opened.close().catch(() => undefined);
  }
}
