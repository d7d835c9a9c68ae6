// "No records" that may mean "wrong place": every empty answer names the store (masked), the
// namespace and the tenant it read, and tells apart a namespace with nothing of toolfence's in it
// (a wrong --prefix, --schema, --table or --store: exit 3, with the prefixes nearby that do hold
// toolfence data) from one whose records just do not match (exit 0, with where the records are:
// other tenants, other states).
import type { Guard, ListOptions, ListState } from '@toolfence/core';
import type { CommandContext } from './context.js';
import { visible } from './escape.js';

/** Every state `list` can select: a listing that must not miss a record asks for all of them. */
export const ALL_STATES: readonly ListState[] = [
  'indeterminate',
  'abandoned',
  'lease_expired',
  'in_progress',
  'completed',
  'awaiting_approval',
  'approved',
  'denied',
];

/** Where the command read, for --json. */
export function placeJson(context: CommandContext): {
  store: string;
  namespace: Readonly<Record<string, string>>;
} {
  return { store: context.place.store, namespace: context.opened.namespaceOptions };
}

/** `redis://…:6379/0 prefix "toolfence", tenant "shop"`. */
export function describePlace(context: CommandContext): string {
  return `${context.place.store} ${visible(context.place.namespace)}, tenant ${JSON.stringify(context.place.tenant)}`;
}

/**
 * When the namespace holds nothing of toolfence's at all: the message saying so (and where
 * toolfence data is); else undefined.
 */
export async function emptyNamespace(guard: Guard, context: CommandContext): Promise<string | undefined> {
  const any = await guard.list({ allTenants: true, states: [...ALL_STATES], limit: 1 });
  if (any.records.length > 0) return undefined;
  const { hasData, elsewhere } = await context.opened.probe();
  if (hasData) return undefined;
  const option = context.place.namespace.split(' ')[0];
  const hint =
    elsewhere.length > 0
      ? `; toolfence data is under ${elsewhere.map((prefix) => `--prefix ${JSON.stringify(prefix)}`).join(', ')}`
      : '';
  return `toolfence: nothing of toolfence's in ${context.place.store} ${visible(context.place.namespace)}: is --${option} (or --store) the one your application uses?${visible(hint)}`;
}

/**
 * Why a listing came back empty: which of the namespace's records would match with other options
 * (other tenants, other states), or that it holds none at all.
 */
export async function whyNoRecords(
  guard: Guard,
  context: CommandContext,
  options: Omit<ListOptions, 'limit'>,
): Promise<string> {
  const where = describePlace(context);
  const hints: string[] = [];
  if (options.allTenants !== true) {
    const { tenant: _tenant, ...everyTenant } = options;
    const others = await guard.list({ ...everyTenant, allTenants: true, limit: 1 });
    if (others.records.length > 0)
      hints.push('other tenants have matching records (--all-tenants lists them)');
  }
  const { olderThanMs: _olderThan, tool: _tool, ...unfiltered } = options;
  const allStates = await guard.list({ ...unfiltered, states: [...ALL_STATES], limit: 1 });
  if (allStates.records.length > 0) {
    hints.push(
      `${options.allTenants === true ? 'the namespace has' : 'this tenant has'} records in other states, of other tools or younger (--state completed,in_progress lists settled and running ones)`,
    );
  }
  const scope = options.allTenants === true ? where.replace(/, tenant .*$/, ', every tenant') : where;
  const states = (options.states ?? ['indeterminate', 'abandoned', 'lease_expired']).join(', ');
  if (hints.length === 0) {
    const any = await guard.list({ allTenants: true, states: [...ALL_STATES], limit: 1 });
    if (any.records.length === 0)
      return `no records in ${scope}: the namespace holds none, of any tenant or state`;
  }
  return `no ${states} records in ${scope}${hints.length === 0 ? '' : `; ${hints.join('; ')}`}`;
}
