// A scripted language model for offline end-to-end tests of the AI SDK adapter. Runs against AI
// SDK 6 (MockLanguageModelV3) and AI SDK 7 (MockLanguageModelV4; ai 7 still accepts V3 models,
// but its own mock is the one its docs use). The V3 and V4 result formats used here are the same.
import * as aiTest from 'ai/test';

/** One tool call the model makes; `input` is sent JSON-encoded as the providers do. */
export interface ScriptedCall {
  readonly toolName: string;
  readonly input: Record<string, unknown>;
  readonly toolCallId?: string;
}

/** One model step: the tool calls it makes, or its final text. */
export type ScriptedStep = readonly ScriptedCall[] | string;

type MockModelConstructor = typeof aiTest.MockLanguageModelV3;
const testExports = aiTest as unknown as Record<string, MockModelConstructor | undefined>;
/** The newest language model mock the installed `ai/test` has. */
export const MockLanguageModel: MockModelConstructor =
  testExports.MockLanguageModelV4 ?? (testExports.MockLanguageModelV3 as MockModelConstructor);
/** The installed AI SDK major (6 or 7), read from its mock: tests branch on it only where the SDKs differ. */
export const aiMajor: 6 | 7 = testExports.MockLanguageModelV4 === undefined ? 6 : 7;

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};

/**
 * A model that answers step `n` (0-based, counted per model call) with `steps[n]`; after the
 * script ends it answers "done". Tool call ids default to `call-<step>-<index>`.
 */
export function scriptedModel(steps: readonly ScriptedStep[]) {
  const callsOf = (step: number) => {
    const script = steps[step] ?? 'done';
    if (typeof script === 'string') return { text: script, calls: [] as const };
    return {
      text: undefined,
      calls: script.map((call, index) => ({
        type: 'tool-call' as const,
        toolCallId: call.toolCallId ?? `call-${step}-${index}`,
        toolName: call.toolName,
        input: JSON.stringify(call.input),
      })),
    };
  };
  let generateCalls = 0;
  let streamCalls = 0;
  const model = new MockLanguageModel({
    doGenerate: async () => {
      const { text, calls } = callsOf(generateCalls++);
      return {
        content: text === undefined ? [...calls] : [{ type: 'text' as const, text }],
        finishReason: { unified: text === undefined ? 'tool-calls' : 'stop', raw: undefined },
        usage,
        warnings: [],
      };
    },
    doStream: async () => {
      const { text, calls } = callsOf(streamCalls++);
      const parts: unknown[] = [{ type: 'stream-start', warnings: [] }];
      if (text !== undefined) {
        parts.push(
          { type: 'text-start', id: 't' },
          { type: 'text-delta', id: 't', delta: text },
          { type: 'text-end', id: 't' },
        );
      }
      parts.push(...calls, {
        type: 'finish',
        finishReason: { unified: text === undefined ? 'tool-calls' : 'stop', raw: undefined },
        usage,
      });
      return {
        stream: new ReadableStream({
          start(controller) {
            for (const part of parts) controller.enqueue(part);
            controller.close();
          },
        }) as never,
      };
    },
  });
  return model;
}
