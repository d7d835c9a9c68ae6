// Where recordApprovals finds, for a fenced tool whose policy needs an approval, how to decide on
// one of its calls exactly as its `invoke` claims it. A leaf: fence-tool.ts registers, and
// record-approvals.ts reads, without importing each other.
import type { FunctionTool, RunContext } from '@openai/agents-core';
import type { ApprovalOptions, DecideResult } from '@toolfence/core';

/**
 * Records `guard.approve` (approved) or `guard.deny` for the call of `input` (the model's JSON
 * arguments) with `details`; `undefined` when the input does not parse (the guard never sees it).
 */
export type ApprovalDecider = (
  runContext: RunContext<any>,
  input: string,
  details: Parameters<FunctionTool<any, any, any>['invoke']>[2],
  approved: boolean,
  audit: ApprovalOptions,
) => Promise<DecideResult | undefined>;

const deciders = new WeakMap<object, ApprovalDecider>();

export function registerApprovalDecider(tool: object, decider: ApprovalDecider): void {
  deciders.set(tool, decider);
}

export function approvalDeciderOf(tool: object): ApprovalDecider | undefined {
  return deciders.get(tool);
}
