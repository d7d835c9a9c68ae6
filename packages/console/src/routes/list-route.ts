// GET / : the list of records in one state, filtered and paged.
import { type ListOptions, type ListPage, StoreInputError } from '@toolfence/core';
import { MAX_RETENTION_MS } from '@toolfence/core/store';
import { isConsoleState } from '../format.js';
import { nameProblem } from '../names.js';
import { maySee } from '../operator.js';
import { type ListFilters, listPage } from '../pages/list-page.js';
import { sendHtml } from '../respond.js';
import { ConsoleRefusal, notYourTenant, type RouteContext } from './context.js';

function optional(value: string | null): string | undefined {
  const trimmed = value?.trim();
  return trimmed === undefined || trimmed === '' ? undefined : trimmed;
}

/** The filters of the query, checked against the operator's tenants. @throws ConsoleRefusal */
export function filtersOf(context: RouteContext): ListFilters {
  const { query } = context.route;
  const { tenants } = context.operator;
  const state = query.get('state');
  let tenant = optional(query.get('tenant'));
  if (tenant === undefined && tenants !== '*') {
    if (tenants.length === 0)
      throw new ConsoleRefusal(403, 'Not allowed', 'You may not see the records of any tenant.');
    tenant = tenants[0];
  }
  if (tenant !== undefined) {
    const problem = nameProblem(tenant);
    if (problem !== undefined) throw new ConsoleRefusal(400, 'Bad request', `The tenant ${problem}.`);
    if (!maySee(context.operator, tenant)) throw notYourTenant();
  }
  const tool = optional(query.get('tool'));
  const toolProblem = tool === undefined ? undefined : nameProblem(tool);
  if (toolProblem !== undefined) throw new ConsoleRefusal(400, 'Bad request', `The tool ${toolProblem}.`);
  const age = optional(query.get('age')) ?? '0';
  const olderThanMs = /^\d{1,12}$/.test(age) ? Number(age) : Number.NaN;
  if (!(olderThanMs >= 0 && olderThanMs <= MAX_RETENTION_MS)) {
    throw new ConsoleRefusal(400, 'Bad request', 'The age must be a whole number of milliseconds.');
  }
  return {
    state: isConsoleState(state) ? state : 'indeterminate',
    tenant,
    tool,
    olderThanMs,
    order: query.get('order') === 'newest' ? 'newest' : 'oldest',
    cursor: optional(query.get('cursor')),
  };
}

async function listOf(context: RouteContext, filters: ListFilters): Promise<ListPage | undefined> {
  const { store } = context.options;
  if (typeof store.list !== 'function') return undefined;
  const options: ListOptions = {
    ...(filters.tenant === undefined ? { allTenants: true } : { tenant: filters.tenant }),
    states: [filters.state],
    ...(filters.tool === undefined ? {} : { tool: filters.tool }),
    ...(filters.olderThanMs === 0 ? {} : { olderThanMs: filters.olderThanMs }),
    order: filters.order,
    limit: context.options.pageSize,
    ...(filters.cursor === undefined ? {} : { cursor: filters.cursor }),
  };
  let page: ListPage;
  try {
    page = await store.list(options);
  } catch (error) {
    if (StoreInputError.isInstance(error) && filters.cursor !== undefined) {
      throw new ConsoleRefusal(
        400,
        'Bad request',
        'This page link is no longer valid: start from the first page.',
      );
    }
    throw error;
  }
  // A store that answered another tenant's record (a bug) must not show it to this operator.
  const visible = page.records.filter(
    (record) =>
      maySee(context.operator, record.tenant) &&
      (filters.tenant === undefined || record.tenant === filters.tenant),
  );
  if (visible.length !== page.records.length) {
    context.options.onError(
      new Error('the store listed records of a tenant that was not asked for; they were not shown'),
    );
  }
  return { ...page, records: visible };
}

/** Answers the list page. */
export async function listRoute(context: RouteContext): Promise<void> {
  const filters = filtersOf(context);
  const page = await listOf(context, filters);
  sendHtml(
    context.response,
    200,
    listPage(context.frame, {
      filters,
      tenants: context.operator.tenants,
      page,
      approvals: typeof context.options.store.decideApproval === 'function',
    }),
  );
}
