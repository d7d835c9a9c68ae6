// recordApprovals: the AI SDK's approval responses, as they reach the server, recorded in the
// guard's store once, so the fenced `execute` consumes each approval with its claim (an approved
// call runs once whatever number of resubmissions arrive) and a denial stays a denial.
import type { DecideResult } from '@toolfence/core';
import type { ModelMessage, ToolSet } from 'ai';
import { APPROVAL_DECIDER, type ApprovalDecider } from './fenced-execute.js';

/** Options of {@link recordApprovals}. */
export interface RecordApprovalsOptions {
  /**
   * The messages `generateText` / `streamText` is about to be given: the SDK's rule applies (the
   * approval responses are the `tool-approval-response` parts of the LAST message, a `tool`
   * message; their requests and tool calls are found in the assistant messages before it).
   * The tool calls' inputs are taken from these messages, so they must be the server's own copy
   * of the conversation (or checked with the SDK's `experimental_toolApprovalSecret` first): an
   * input a client edited would be approved as edited (docs/approvals.md, "Trust").
   */
  readonly messages: readonly ModelMessage[];
  /** The operator who decided (the authenticated user id), at most `MAX_NAME_LENGTH` code units. */
  readonly by?: string;
  /** Why, at most `MAX_REASON_LENGTH` code units; the client's `reason` text is not recorded. */
  readonly reason?: string;
  /** The `experimental_context` the run gets (AI SDK 6): its `toolfence` tenant and run id. */
  readonly experimental_context?: unknown;
  /** The `toolsContext` the run gets (AI SDK 7): each tool's entry, for its tenant and run id. */
  readonly toolsContext?: Readonly<Record<string, unknown>>;
}

/** One decision {@link recordApprovals} recorded, with the store's answer. */
export interface RecordedApproval {
  /** The tool the decision is on (an `edit` may name another tool than the model's call). */
  readonly toolName: string;
  /** The SDK's tool call id of the call (the `callId` the guard keys and records it with). */
  readonly toolCallId: string;
  /** The decision as the response gave it. */
  readonly approved: boolean;
  /**
   * The store's answer (`guard.approve` / `guard.deny`): `decided` (recorded, or already so),
   * `denied` (an approval found a denial: it stands, the execute will throw
   * `ApprovalDeniedError`), `consumed` (the call was claimed already: its execute replays),
   * `conflict` (the key holds another tool or other arguments).
   */
  readonly status: DecideResult['status'];
}

interface ToolCallPart {
  readonly type: 'tool-call';
  readonly toolCallId: string;
  readonly toolName: string;
  readonly input: unknown;
}

interface ApprovalRequestPart {
  readonly type: 'tool-approval-request';
  readonly approvalId: string;
  readonly toolCallId: string;
}

interface ApprovalResponsePart {
  readonly type: 'tool-approval-response';
  readonly approvalId: string;
  readonly approved: boolean;
}

type Part = { readonly type: string } & Record<string, unknown>;

function partsOf(message: ModelMessage | undefined): readonly Part[] {
  const content = (message as { content?: unknown } | undefined)?.content;
  return Array.isArray(content) ? (content as Part[]) : [];
}

function deciderOf(tools: ToolSet, toolName: string): ApprovalDecider | undefined {
  if (!Object.hasOwn(tools, toolName)) return undefined;
  const execute = (tools[toolName] as { execute?: unknown } | undefined)?.execute;
  if (typeof execute !== 'function') return undefined;
  const decider = (execute as unknown as Record<symbol, unknown>)[APPROVAL_DECIDER];
  return typeof decider === 'function' ? (decider as ApprovalDecider) : undefined;
}

/**
 * Record the approval responses of `messages` in the guard's store, for the tools of `tools` (a
 * set from {@link fenceTools}) whose policy has `approval: 'required'`: an approval with
 * `guard.approve`, a denial with `guard.deny`, each with the call the fenced `execute` will claim
 * (tool, input, `toolCallId`, tenant and run id). Call it on the server, in the authenticated
 * request that carries the user's decision, before `generateText` / `streamText` resumes the
 * conversation; the SDK's own approval flow is unchanged.
 *
 * What it buys: the claim consumes the approval, so an approved call runs ONCE however many
 * times the approval is submitted (concurrently too; a later submission replays the outcome); an
 * approval recorded for one input never authorises another (the fenced call stops with
 * `ApprovalRequiredError`); a denial is recorded and stays one, so a resubmission that flips it to
 * an approval makes the execute throw `ApprovalDeniedError`. Responses the SDK would skip (their
 * call already has a result in the last message) and calls of other tools are skipped;
 * a response without a request is left for the SDK to refuse (`InvalidToolApprovalError`).
 *
 * @returns one entry per decision recorded, in message order.
 * @throws KeyDerivationError the call's key cannot be derived (e.g. a `'run'`-scoped policy without a run id)
 * @throws StoreConfigurationError the guard's store keeps no approvals
 * @throws StoreInputError `by` or `reason` outside the store limits (nothing written)
 * @throws StoreUnavailableError
 */
export async function recordApprovals(
  tools: ToolSet,
  options: RecordApprovalsOptions,
): Promise<readonly RecordedApproval[]> {
  const { messages } = options;
  if (!Array.isArray(messages)) throw new TypeError('recordApprovals needs the messages');
  const last = messages.at(-1);
  if ((last as { role?: unknown } | undefined)?.role !== 'tool') return [];
  const toolCalls = new Map<string, ToolCallPart>();
  const requests = new Map<string, ApprovalRequestPart>();
  for (const message of messages) {
    if ((message as { role?: unknown }).role !== 'assistant') continue;
    for (const part of partsOf(message)) {
      if (part.type === 'tool-call') toolCalls.set(String(part.toolCallId), part as unknown as ToolCallPart);
      if (part.type === 'tool-approval-request') {
        requests.set(String(part.approvalId), part as unknown as ApprovalRequestPart);
      }
    }
  }
  const answered = new Set(
    partsOf(last)
      .filter((part) => part.type === 'tool-result')
      .map((part) => String(part.toolCallId)),
  );
  const audit = {
    ...(options.by === undefined ? {} : { by: options.by }),
    ...(options.reason === undefined ? {} : { reason: options.reason }),
  };
  const recorded: RecordedApproval[] = [];
  const seen = new Set<string>();
  for (const part of partsOf(last)) {
    if (part.type !== 'tool-approval-response') continue;
    const response = part as unknown as ApprovalResponsePart;
    const request = requests.get(String(response.approvalId));
    // As the SDK: the first response per call counts; a call with a result is not run again.
    if (request === undefined || answered.has(request.toolCallId) || seen.has(request.toolCallId)) continue;
    const toolCall = toolCalls.get(request.toolCallId);
    if (toolCall === undefined) continue;
    seen.add(request.toolCallId);
    const decide = deciderOf(tools, toolCall.toolName);
    if (decide === undefined) continue;
    const approved = response.approved === true;
    const executeOptions = {
      toolCallId: toolCall.toolCallId,
      experimental_context: options.experimental_context,
      context: options.toolsContext?.[toolCall.toolName],
    };
    const result = await decide(toolCall.input, executeOptions, approved, audit);
    recorded.push({
      toolName: toolCall.toolName,
      toolCallId: toolCall.toolCallId,
      approved,
      status: result.status,
    });
  }
  return recorded;
}
