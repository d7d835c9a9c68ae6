import type { CallStopError } from '@toolfence/core';
import {
  ExecutionAbandonedError,
  findStopError,
  IndeterminateOutcomeError,
  type StepStoppedError,
  type StopSearchChild,
} from '@toolfence/core';

/**
 * The toolfence stop inside whatever a Mastra run ended with, or `undefined`. A workflow step
 * that a stop ended fails with Mastra's `MastraNonRetryableError` (so `retries` do not run it
 * again) whose `cause` is the stop; `run.start()` / `run.resume()` answer
 * `{ status: 'failed', error }`. Mastra keeps step errors serialised (in the snapshot, and in the
 * agent loop's tool results), so the stop comes back as a plain object: this finds it (in the
 * value, `cause` and `error` chains, arrays, an agent result's `steps` and `toolResults`) and
 * rebuilds the typed error, with the same key, tool, attempt and fence. Pass the error or the
 * whole result.
 *
 * @example
 * ```ts
 * const result = await run.resume({ step: 'approve', resumeData: { approved: true } });
 * const stop = stopErrorOf(result);
 * if (stop !== undefined) await alert(stop.key); // check the provider, then guard.resolve(...)
 * ```
 */
export function stopErrorOf(value: unknown): CallStopError | StepStoppedError | undefined {
  return findStopError(value, { childrenOf: mastraChildren });
}

/** Where Mastra keeps errors, besides arrays, `errors` and `cause`; serialised stops revived. */
function mastraChildren(value: object): StopSearchChild[] {
  const revived = revive(value);
  if (revived !== undefined) return [{ value: revived }];
  const record = value as {
    type?: unknown;
    error?: unknown;
    output?: { type?: unknown; value?: unknown };
    toolCallId?: unknown;
    steps?: unknown;
    content?: unknown;
    payload?: unknown;
  };
  const children: StopSearchChild[] = [];
  // The agent loop answers the model with the error's message only (a tool-result part whose
  // output is error-text): the stop's message names its key, tool, attempt and fence.
  if (record.type === 'tool-result' && record.output?.type === 'error-text') {
    const fromText = reviveFromText(String(record.output.value ?? ''));
    const callId = typeof record.toolCallId === 'string' ? record.toolCallId : undefined;
    if (fromText !== undefined) children.push({ value: fromText, callId });
  }
  if (record.error !== undefined) children.push({ value: record.error });
  if (Array.isArray(record.steps)) children.push({ value: record.steps });
  if (Array.isArray(record.content)) children.push({ value: record.content });
  if (record.payload !== null && typeof record.payload === 'object') children.push({ value: record.payload });
  return children;
}

type Serialised = {
  name?: unknown;
  code?: unknown;
  message?: unknown;
  key?: unknown;
  tool?: unknown;
  attempt?: unknown;
  fence?: unknown;
  reasonType?: unknown;
  callId?: unknown;
  cause?: unknown;
};

/** A stop Mastra serialised (name, code and the fields kept), as the typed error again. */
function revive(value: object): CallStopError | undefined {
  const error = value as Serialised;
  if (typeof error.key !== 'string' || typeof error.tool !== 'string') return undefined;
  if (typeof error.attempt !== 'number' || typeof error.fence !== 'number') return undefined;
  const callId = typeof error.callId === 'string' ? error.callId : undefined;
  const base = { key: error.key, tool: error.tool, attempt: error.attempt, fence: error.fence };
  if (error.code === 'INDETERMINATE_OUTCOME' && typeof error.reasonType === 'string') {
    return new IndeterminateOutcomeError(
      {
        ...base,
        reasonType: error.reasonType,
        reason: reasonOf(String(error.message ?? ''), error.reasonType),
        ...(callId === undefined ? {} : { callId }),
      },
      { cause: error.cause },
    );
  }
  if (error.code === 'EXECUTION_ABANDONED') {
    return new ExecutionAbandonedError({ ...base, ...(callId === undefined ? {} : { callId }) });
  }
  return undefined;
}

const INDETERMINATE_TEXT =
  /^The outcome of tool "(.+)" is unknown \(([^:]+): (.*)\)\. The action may have happened: .* Idempotency key ([0-9a-f]+), attempt (\d+), fence (\d+)\.$/s;
const ABANDONED_TEXT =
  /^Tool "(.+)" was abandoned after (\d+) lost attempt\(s\) \(idempotency key ([0-9a-f]+), fence (\d+)\); it is not retried automatically\.$/s;

/** A stop from its message alone (what the model was answered with), or `undefined`. */
function reviveFromText(text: string): CallStopError | undefined {
  const indeterminate = INDETERMINATE_TEXT.exec(text);
  if (indeterminate !== null) {
    const [, tool, reasonType, reason, key, attempt, fence] = indeterminate as unknown as string[];
    return new IndeterminateOutcomeError({
      tool: tool as string,
      reasonType: reasonType as string,
      reason: reason as string,
      key: key as string,
      attempt: Number(attempt),
      fence: Number(fence),
    });
  }
  const abandoned = ABANDONED_TEXT.exec(text);
  if (abandoned !== null) {
    const [, tool, attempt, key, fence] = abandoned as unknown as string[];
    return new ExecutionAbandonedError({
      tool: tool as string,
      key: key as string,
      attempt: Number(attempt),
      fence: Number(fence),
    });
  }
  return undefined;
}

/** The reason inside an IndeterminateOutcomeError's message: "(<type>: <reason>). The action". */
function reasonOf(message: string, reasonType: string): string {
  const start = message.indexOf(`(${reasonType}: `);
  const end = message.lastIndexOf('). The action may have happened');
  if (start === -1 || end === -1 || end < start) return reasonType;
  return message.slice(start + reasonType.length + 3, end);
}
