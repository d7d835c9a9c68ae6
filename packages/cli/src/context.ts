// What every command shares: where the store is, the tenant, the output, and a Guard on the store
// (resolutions go through `guard.resolve`, so each one is audited and emits `tool.resolved`).
import { Guard, type GuardEvent, type IdempotencyStore } from '@toolfence/core';
import { openStore, type StoreNamespace } from './open-store.js';
import type { Output } from './output.js';
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
}

/** The location of the store, kept so every message can be masked with its secrets. */
export interface LocationHolder {
  location: StoreLocation | undefined;
}

/** Opens the store, runs `work` with a guard on it, always closes the store. */
export async function withStore(
  options: GlobalOptions,
  env: NodeJS.ProcessEnv,
  output: Output,
  holder: LocationHolder,
  work: (store: IdempotencyStore, guard: Guard, context: CommandContext) => Promise<number>,
): Promise<number> {
  const location = parseStoreLocation(options.store ?? env.TOOLFENCE_STORE);
  holder.location = location;
  const namespace: StoreNamespace = {
    ...(options.prefix === undefined ? {} : { prefix: options.prefix }),
    ...(options.schema === undefined ? {} : { schema: options.schema }),
    ...(options.table === undefined ? {} : { table: options.table }),
  };
  const opened = await openStore(location, namespace);
  const events: GuardEvent[] = [];
  const tenant = options.tenant ?? (env.TOOLFENCE_TENANT || 'default');
  try {
    const guard = new Guard({ store: opened.store, tenant, onEvent: (event) => events.push(event) });
    return await work(opened.store, guard, { tenant, json: options.json === true, output, events });
  } finally {
    await opened.close().catch(() => undefined);
  }
}
