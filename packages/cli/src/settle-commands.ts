// `toolfence inspect`, `resolve`, `release` and `forget`: one record, or one tenant.
import { userInfo } from 'node:os';
import { createInterface } from 'node:readline/promises';
import {
  type Guard,
  type Holder,
  HolderAliveError,
  type IdempotencyStore,
  type ResolveResult,
} from '@toolfence/core';
import { checkResolutionAudit, isApprovalState } from '@toolfence/core/store';
import type { CommandContext } from './context.js';
import { formatAge, parseDuration } from './durations.js';
import { visible } from './escape.js';
import { CliError, ExitCode } from './exit-codes.js';
import { checkKeyArgument, findKey } from './key-lookup.js';
import { holderNote, inspectLines } from './output.js';
import { emptyNamespace, placeJson } from './place.js';

export async function inspectCommand(guard: Guard, context: CommandContext, given: string): Promise<number> {
  const key = await findKey(guard, context, given);
  const [record, history] = await Promise.all([guard.inspect(key), guard.resolutions(key)]);
  const found = record !== null || history.length > 0;
  const empty = found ? undefined : await emptyNamespace(guard, context);
  // Whether an in-progress holder is alive is judged on the store's clock (a listing's `nowMs`).
  const nowMs = record?.state === 'in_progress' ? (await guard.list({ limit: 1 })).nowMs : undefined;
  const holderAlive = record !== null && nowMs !== undefined ? record.leaseExpiresAtMs > nowMs : undefined;
  if (context.json) {
    context.output.json({
      key,
      tenant: context.tenant,
      record,
      ...(holderAlive === undefined ? {} : { holderAlive, nowMs }),
      resolutions: history,
      ...placeJson(context),
    });
  } else {
    for (const line of inspectLines(key, context.place, record, history, nowMs)) context.output.out(line);
  }
  if (empty !== undefined) context.output.err(empty);
  return found ? ExitCode.done : empty === undefined ? ExitCode.notFound : ExitCode.storeUnavailable;
}

export interface SettleFlags {
  readonly outcome?: string;
  readonly by?: string;
  readonly reason?: string;
  readonly retention?: string;
  /** The holder `inspect` showed (`--fence N --owner ID`): settle only that record. */
  readonly fence?: string;
  readonly owner?: string;
  /** Settle even a live holder (its body may still take effect); needs `--reason`. */
  readonly force?: boolean;
}

/** `--fence N --owner ID`, both or neither. @throws CliError (usage) */
export function expectedHolderOf(flags: SettleFlags): Holder | undefined {
  if (flags.fence === undefined && flags.owner === undefined) return undefined;
  if (flags.fence === undefined || flags.owner === undefined) {
    throw new CliError('--fence and --owner go together (both from `toolfence inspect`)', ExitCode.usage);
  }
  const fence = /^[1-9][0-9]{0,15}$/.test(flags.fence) ? Number(flags.fence) : Number.NaN;
  if (!Number.isSafeInteger(fence)) {
    throw new CliError(
      `--fence must be a whole number >= 1, got ${JSON.stringify(flags.fence)}`,
      ExitCode.usage,
    );
  }
  return { fence, owner: flags.owner };
}

/**
 * Everything `resolve` / `release` are given, checked before anything connects: the key, the
 * outcome's JSON, the holder, the retention, `--by` and `--reason`. @throws CliError (usage)
 */
export function checkSettleInput(key: string, flags: SettleFlags, action: 'resolve' | 'release'): void {
  checkKeyArgument(key);
  if (action === 'resolve') outcomeOf(flags);
  expectedHolderOf(flags);
  if (flags.force === true && (flags.reason === undefined || flags.reason.trim() === '')) {
    throw new CliError(
      '--force needs --reason: why the running holder is overridden (it is kept in the history)',
      ExitCode.usage,
    );
  }
  if (flags.retention !== undefined) parseDuration('--retention', flags.retention);
  try {
    checkResolutionAudit({
      ...(flags.by === undefined ? {} : { by: flags.by }),
      ...(flags.reason === undefined ? {} : { reason: flags.reason }),
    });
  } catch (error) {
    throw new CliError((error as Error).message, ExitCode.usage);
  }
}

/** `--outcome` parsed. @throws CliError (usage) */
function outcomeOf(flags: SettleFlags): { outcome: unknown } {
  if (flags.outcome === undefined)
    throw new CliError('resolve needs --outcome JSON (what the call returned)', ExitCode.usage);
  try {
    return { outcome: JSON.parse(flags.outcome) as unknown };
  } catch (error) {
    throw new CliError(`--outcome is not JSON: ${(error as Error).message}`, ExitCode.usage);
  }
}

/** Who resolves: `--by`, else TOOLFENCE_OPERATOR, else the login name. */
function operatorOf(flags: SettleFlags, env: NodeJS.ProcessEnv): string | undefined {
  if (flags.by !== undefined) return flags.by;
  if (env.TOOLFENCE_OPERATOR) return env.TOOLFENCE_OPERATOR;
  try {
    return userInfo().username || undefined;
  } catch {
    return undefined;
  }
}

/** `resolve KEY --outcome JSON` (it happened) or `release KEY` (it did not). */
export async function settleCommand(
  guard: Guard,
  context: CommandContext,
  given: string,
  flags: SettleFlags,
  env: NodeJS.ProcessEnv,
  action: 'resolve' | 'release',
): Promise<number> {
  const resolution: { outcome: unknown } | { released: true } =
    action === 'resolve' ? outcomeOf(flags) : { released: true };
  const expect = expectedHolderOf(flags);
  const by = operatorOf(flags, env);
  const key = await findKey(guard, context, given);
  const shownKey = visible(key);
  let result: ResolveResult;
  try {
    result = await guard.resolve(key, resolution, {
      tenant: context.tenant,
      ...(expect === undefined ? {} : { expect }),
      ...(by === undefined ? {} : { by }),
      ...(flags.reason === undefined ? {} : { reason: flags.reason }),
      ...(flags.force === true && flags.reason !== undefined ? { force: { reason: flags.reason } } : {}),
      ...(flags.retention === undefined
        ? {}
        : { retentionMs: parseDuration('--retention', flags.retention) }),
    });
  } catch (error) {
    if (!HolderAliveError.isInstance(error)) throw error;
    return holderAlive(context, key, error);
  }
  const event = context.events.find((each) => each.type === 'tool.resolved');
  if (context.json) {
    context.output.json({
      key,
      tenant: context.tenant,
      ...result,
      ...(event === undefined ? {} : { event }),
    });
  } else if (result.status === 'resolved') {
    const what =
      action === 'resolve' ? 'completed with the given outcome' : 'released: the call may run again';
    context.output.out(
      `${shownKey}: ${what} (by ${visible(by ?? 'unknown')}; ${keptFor(event?.resolution)}; event tool.resolved)`,
    );
  } else if (result.status === 'not_found') {
    context.output.err(
      `${shownKey}: no record in tenant ${JSON.stringify(context.tenant)} of ${context.place.store} ${context.place.namespace} (released, forgotten or past retention?)`,
    );
  } else if (result.status === 'changed') {
    const now = result.record;
    const since = expect === undefined ? 'since it was read' : 'since you inspected it';
    context.output.err(
      `${shownKey}: the record changed ${since}, nothing was settled: it is now ${now.state}, attempt ${now.attempt} (--fence ${now.fence} --owner ${visible(now.owner)})` +
        `${expect === undefined ? '' : `, not --fence ${expect.fence} --owner ${visible(expect.owner)}`}; inspect it again before deciding`,
    );
  } else if (isApprovalState(result.record.state)) {
    context.output.err(
      `${shownKey}: not resolvable: the record is ${result.record.state}, before any attempt (nothing ran to settle); decide it with toolfence approve or deny, nothing was settled`,
    );
  } else {
    context.output.err(
      `${shownKey}: not resolvable: the record is ${result.record.state} (a completed record is settled already)`,
    );
  }
  return result.status === 'resolved' ? ExitCode.done : ExitCode.notFound;
}

/** "kept 7d (the call's retention)": how long the resolution keeps the record, and whose choice. */
function keptFor(resolution: { retentionMs?: number; retentionFrom?: string } | undefined): string {
  if (resolution?.retentionMs === undefined) return 'kept for the default retention';
  const whose =
    resolution.retentionFrom === 'operator'
      ? '--retention'
      : resolution.retentionFrom === 'call'
        ? 'the retention the call was claimed with'
        : "the guard's default: the store does not report the call's";
  return `kept ${formatAge(resolution.retentionMs)} (${whose})`;
}

/** The answer to a refused decision about a live holder: what runs, until when, and what to do. */
function holderAlive(context: CommandContext, key: string, error: HolderAliveError): number {
  if (context.json) {
    context.output.json({
      key,
      tenant: context.tenant,
      status: 'holder_alive',
      holder: { fence: error.fence, owner: error.owner },
      ...(error.claimedAtMs === undefined ? {} : { claimedAtMs: error.claimedAtMs }),
      leaseExpiresAtMs: error.leaseExpiresAtMs,
    });
  } else {
    context.output.err(
      `${visible(key)}: ${holderNote({ owner: error.owner, claimedAtMs: error.claimedAtMs, leaseExpiresAtMs: error.leaseExpiresAtMs })}: ` +
        'its body may still take effect, nothing was settled. Wait until it settles (toolfence inspect shows it), ' +
        "or, if that worker is known to be stuck, decide anyway with --force --reason '…' (kept in the history)",
    );
  }
  return ExitCode.holderAlive;
}

/** `forget --tenant T`: asks to type the tenant's name unless `--yes`. */
export async function forgetCommand(
  store: IdempotencyStore,
  context: CommandContext,
  yes: boolean,
  stdin: NodeJS.ReadableStream,
  tenantGiven: boolean,
): Promise<number> {
  if (!tenantGiven)
    throw new CliError('forget needs --tenant: it erases every record of that tenant', ExitCode.usage);
  if (!yes) {
    const prompt = createInterface({ input: stdin, terminal: false });
    context.output.err(
      `Erase every record, index entry and resolution of tenant ${JSON.stringify(context.tenant)}? Type the tenant name to confirm:`,
    );
    let answer: string | undefined;
    try {
      answer = await new Promise<string | undefined>((resolve) => {
        prompt.once('line', resolve);
        prompt.once('close', () => resolve(undefined));
      });
    } finally {
      prompt.close();
    }
    if (answer?.trim() !== context.tenant) {
      context.output.err('not confirmed: nothing was erased');
      return ExitCode.usage;
    }
  }
  const erased = await store.forget({ tenant: context.tenant });
  if (context.json) context.output.json({ tenant: context.tenant, erased });
  else context.output.out(`erased ${erased} record(s) of tenant ${JSON.stringify(context.tenant)}`);
  return ExitCode.done;
}
