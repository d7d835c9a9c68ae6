// `toolfence approvals`, `approve` and `deny`: the calls that wait for an operator's decision, and
// the decision itself. A decision is made on the request the operator looked at: the record is
// read first, and the store decides only if it still has that request's owner, tool and argument
// fingerprint (compared in its own atomic step), so a request that was decided, expired or asked
// again meanwhile is never decided blind.
import {
  DEFAULT_RETENTION_MS,
  type DecideResult,
  type Guard,
  type IdempotencyRecord,
  type IdempotencyStore,
  StoreConfigurationError,
} from '@toolfence/core';
import { checkResolutionAudit } from '@toolfence/core/store';
import type { CommandContext, Work } from './context.js';
import { visible } from './escape.js';
import { CliError, ExitCode } from './exit-codes.js';
import { checkKeyArgument, findKey } from './key-lookup.js';
import { type ListFlags, listCommand } from './list-commands.js';
import { emptyNamespace } from './place.js';

export interface DecideFlags {
  readonly by?: string;
  readonly reason?: string;
  /** The request `approvals` or `inspect` showed (its owner): decide only that one. */
  readonly owner?: string;
}

/**
 * A store without `decideApproval` keeps no approvals: nothing of it waits for a decision, and
 * nothing the CLI could write would be read by a claim. @throws StoreConfigurationError
 */
export function requireApprovalStore(store: IdempotencyStore): void {
  if (typeof store.decideApproval === 'function') return;
  throw new StoreConfigurationError(
    store.constructor?.name || 'the store',
    'it keeps no approvals (it has no decideApproval): no call of it can wait for one, and approve or deny would change nothing',
  );
}

/** `toolfence approvals`: `list --state awaiting_approval`, on a store that keeps approvals. */
export function approvalsCommand(flags: Omit<ListFlags, 'state'>, tenantGiven: boolean): Work {
  const list = listCommand({ ...flags, state: ['awaiting_approval'] }, tenantGiven);
  return (store, guard, context) => {
    requireApprovalStore(store);
    return list(store, guard, context);
  };
}

/** Everything `approve` / `deny` are given, checked before anything connects. @throws CliError (usage) */
export function checkDecideInput(key: string, flags: DecideFlags, approved: boolean): void {
  checkKeyArgument(key);
  // Unlike resolve there is no login-name default: a decision to let a call run names its person.
  if (flags.by === undefined || flags.by.trim() === '') {
    throw new CliError(
      `${approved ? 'approve' : 'deny'} needs --by NAME: who decides (it is kept with the record)`,
      ExitCode.usage,
    );
  }
  if (flags.owner !== undefined && flags.owner === '') {
    throw new CliError('--owner must not be empty (give the one inspect showed)', ExitCode.usage);
  }
  try {
    checkResolutionAudit({ by: flags.by, ...(flags.reason === undefined ? {} : { reason: flags.reason }) });
  } catch (error) {
    throw new CliError((error as Error).message, ExitCode.usage);
  }
}

/** The awaiting request, as `inspect` shows it, or the exit code and message when there is none. */
async function requestOf(
  guard: Guard,
  context: CommandContext,
  key: string,
  approved: boolean,
): Promise<IdempotencyRecord | number> {
  const record = await guard.inspect(key);
  const shown = visible(key);
  if (record === null) {
    const empty = await emptyNamespace(guard, context);
    context.output.err(
      empty ??
        `${shown}: no record in tenant ${JSON.stringify(context.tenant)} of ${context.place.store} ${visible(context.place.namespace)}: no call waits for a decision under this key (decided and forgotten, or past retention?)`,
    );
    return empty === undefined ? ExitCode.notFound : ExitCode.storeUnavailable;
  }
  // A denial may still revoke an approval nobody used; anything else is no request to decide.
  if (record.state === 'awaiting_approval' || (!approved && record.state === 'approved')) return record;
  context.output.err(`${shown}: ${notDecidable(record)}; nothing was decided`);
  return ExitCode.notFound;
}

function notDecidable(record: IdempotencyRecord): string {
  if (record.state === 'approved')
    return `already approved${auditOf(record)}: it runs once, on its next call`;
  if (record.state === 'denied') return `denied${auditOf(record)}: a denial stays a denial`;
  return `the record is ${record.state}, attempt ${record.attempt}: the call was claimed (an approval was used, or it needed none)`;
}

function auditOf(record: IdempotencyRecord): string {
  const approval = record.approval;
  if (approval === undefined) return '';
  const who = approval.by === undefined ? '' : ` by ${visible(approval.by)}`;
  const why = approval.reason === undefined ? '' : ` (${visible(approval.reason)})`;
  return `${who} at ${new Date(approval.atMs).toISOString()}${why}`;
}

const eventNote = (event: unknown) => (event === undefined ? '' : '; event tool.approval_decided');

/** What the store answered, as the operator reads it; the exit code. */
function reportDecision(
  context: CommandContext,
  key: string,
  owner: string,
  result: DecideResult,
  approved: boolean,
  /** The operator gave --owner: the request they inspected earlier. */
  pinned: boolean,
): number {
  const event = context.events.find((each) => each.type === 'tool.approval_decided');
  if (context.json) {
    context.output.json({
      key,
      tenant: context.tenant,
      ...result,
      ...(event === undefined ? {} : { event }),
    });
    return result.status === 'decided' ? ExitCode.done : ExitCode.notFound;
  }
  const shown = visible(key);
  switch (result.status) {
    case 'decided':
      context.output.out(
        approved
          ? `${shown}: approved${auditOf(result.record)}: the call runs once, on its next call (a second use replays its outcome)${eventNote(event)}`
          : `${shown}: denied${auditOf(result.record)}: the call will not run; every repeat is denied${eventNote(event)}`,
      );
      return ExitCode.done;
    case 'changed':
      context.output.err(
        `${shown}: the request changed since ${pinned ? 'you inspected it' : 'it was read'}, nothing was decided: it is now ${result.record.state} (owner ${visible(result.record.owner)}, not ${visible(owner)}); inspect it again before deciding`,
      );
      return ExitCode.notFound;
    case 'not_found':
      context.output.err(
        `${shown}: the request is gone (expired or forgotten meanwhile), nothing was decided`,
      );
      return ExitCode.notFound;
    case 'denied':
    case 'consumed':
      context.output.err(`${shown}: ${notDecidable(result.record)}; nothing was decided`);
      return ExitCode.notFound;
    default:
      // conflict
      context.output.err(
        `${shown}: the record is now of another call (tool ${visible(result.record.tool)}, other arguments), nothing was decided; inspect it again`,
      );
      return ExitCode.notFound;
  }
}

/** A decision on a record without a request owner (approved ahead of its call), store direct. */
async function decideUnowned(
  store: IdempotencyStore,
  context: CommandContext,
  seen: IdempotencyRecord,
  approved: boolean,
  audit: { by: string; reason?: string; retentionMs: number },
): Promise<DecideResult> {
  const { retentionMs, ...who } = audit;
  requireApprovalStore(store);
  const decide = store.decideApproval as NonNullable<IdempotencyStore['decideApproval']>;
  return decide.call(
    store,
    { tenant: context.tenant, key: seen.key },
    { approved, tool: seen.tool, fingerprint: seen.fingerprint, ...who },
    retentionMs,
  );
}

/** `approve KEY --by NAME` or `deny KEY --by NAME`, on the request read first. */
export function decideCommand(given: string, flags: DecideFlags, approved: boolean): Work {
  return async (store, guard, context) => {
    requireApprovalStore(store);
    const key = await findKey(guard, context, given);
    const seen = await requestOf(guard, context, key, approved);
    if (typeof seen === 'number') return seen;
    // The request the operator looked at: the one --owner names, else the one just read.
    const owner = flags.owner ?? seen.owner;
    const audit = {
      by: flags.by as string,
      ...(flags.reason === undefined ? {} : { reason: flags.reason }),
      // The request's own retention (its call's policy): a decision neither shortens nor extends it.
      retentionMs: seen.retentionMs ?? DEFAULT_RETENTION_MS,
    };
    const result =
      owner === ''
        ? // An approval made before its call asked has no request owner: tool and fingerprint bind it.
          await decideUnowned(store, context, seen, approved, audit)
        : // Through the guard, so the decision is audited as tool.approval_decided (--json prints it).
          await guard.decide(
            { key, tenant: context.tenant, tool: seen.tool, fingerprint: seen.fingerprint, owner },
            approved,
            audit,
          );
    return reportDecision(context, key, owner, result, approved, flags.owner !== undefined);
  };
}
