// `toolfence reconcile KEY --probes MODULE`: ask the provider, through the application's own
// reconcile probe, whether an unknown outcome happened; `--apply` settles the record by the
// verdict (docs/reconcile.md, docs/operations.md "Reconcile").
import { resolve as resolvePath } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Guard, PolicyMap, ReconcileResult } from '@toolfence/core';
import type { CommandContext } from './context.js';
import { visible } from './escape.js';
import { CliError, ExitCode } from './exit-codes.js';
import { findKey } from './key-lookup.js';
import { expectedHolderOf, type SettleFlags } from './settle-commands.js';

export interface ReconcileFlags extends Pick<SettleFlags, 'fence' | 'owner'> {
  /** A module exporting `policies` (a policy per tool name), or a default export of them. */
  readonly probes: string;
  /** The call's arguments as JSON, when the operator has them. */
  readonly arguments?: string;
  readonly apply?: boolean;
}

/** `--arguments` parsed (a JSON object). @throws CliError (usage) */
export function argumentsOf(flags: ReconcileFlags): Record<string, unknown> | undefined {
  if (flags.arguments === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(flags.arguments);
  } catch (error) {
    throw new CliError(`--arguments is not JSON: ${(error as Error).message}`, ExitCode.usage);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new CliError('--arguments must be a JSON object (the call’s arguments)', ExitCode.usage);
  }
  return parsed as Record<string, unknown>;
}

/** The policies of the `--probes` module: its `policies` export, else its default export. @throws CliError */
export async function probesOf(path: string): Promise<PolicyMap> {
  let loaded: Record<string, unknown>;
  try {
    loaded = (await import(pathToFileURL(resolvePath(path)).href)) as Record<string, unknown>;
  } catch (error) {
    throw new CliError(
      `--probes: cannot load ${JSON.stringify(path)}: ${(error as Error).message}`,
      ExitCode.usage,
    );
  }
  const policies = loaded.policies ?? loaded.default;
  if (policies === null || typeof policies !== 'object') {
    throw new CliError(
      `--probes: ${JSON.stringify(path)} exports no policies (export const policies = { tool: { kind, reconcile } })`,
      ExitCode.usage,
    );
  }
  return policies as PolicyMap;
}

export async function reconcileCommand(
  guard: Guard,
  context: CommandContext,
  given: string,
  flags: ReconcileFlags,
): Promise<number> {
  const policies = await probesOf(flags.probes);
  const args = argumentsOf(flags);
  const expect = expectedHolderOf(flags);
  const key = await findKey(guard, context, given);
  const result = await guard.reconcile(key, {
    tenant: context.tenant,
    policies,
    apply: flags.apply === true,
    ...(args === undefined ? {} : { arguments: args }),
    ...(expect === undefined ? {} : { expect }),
  });
  if (context.json) context.output.json({ key, tenant: context.tenant, ...result });
  else context.output.out(`${visible(key)}: ${sentence(result, flags.apply === true)}`);
  if (result.status !== 'probed') return ExitCode.notFound;
  if (result.applied === 'holder_alive') return ExitCode.holderAlive;
  if (flags.apply === true && result.applied !== undefined && result.applied !== 'resolved') {
    return ExitCode.notFound;
  }
  return ExitCode.done;
}

/** What was found, in one line (text from the probe and the store escaped). */
function sentence(result: ReconcileResult, apply: boolean): string {
  if (result.status === 'not_found') return 'no record (released, forgotten or past retention?)';
  if (result.status === 'completed') return 'already completed: nothing to ask';
  if (result.status === 'changed') {
    return `the record changed since you inspected it (now --fence ${result.record?.fence} --owner ${visible(result.record?.owner ?? '')}): nothing was asked`;
  }
  const tries = `${result.tries} ${result.tries === 1 ? 'try' : 'tries'}`;
  const detail = result.detail === undefined ? '' : ` (${visible(result.detail)})`;
  const error = result.errorType === undefined ? '' : ` (last error ${visible(result.errorType)})`;
  const said = `the probe says ${result.verdict} after ${tries}${detail}${error}`;
  if (!apply) {
    return result.verdict === 'happened' || result.verdict === 'not_happened'
      ? `${said}; nothing settled (add --apply to settle by it)`
      : `${said}; nothing settled`;
  }
  switch (result.applied) {
    case undefined:
      return `${said}; nothing settled (not a verdict to settle by)`;
    case 'resolved':
      return result.verdict === 'happened'
        ? `${said}; completed with the provider's outcome (by reconcile)`
        : `${said}; released: the call may run again (by reconcile)`;
    case 'holder_alive':
      return `${said}; its holder is alive (its lease is live): nothing settled`;
    default:
      return `${said}; nothing settled: ${result.applied}`;
  }
}
