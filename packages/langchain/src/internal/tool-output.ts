// What a fenced tool records of a ToolMessage and gives back on a replay: its content as
// StructuredTool formats it, and the mark of a tool's own error answer.
import type { ToolMessage } from '@langchain/core/messages';

/** Marks a recorded outcome that came from a ToolMessage with status 'error'. */
export const ERROR_STATUS_TAG = 'toolfence:toolMessageStatusError';

/** As `StructuredTool` formats output: strings and content-block arrays as they are, else JSON. */
export function messageContent(content: unknown): ToolMessage['content'] {
  if (typeof content === 'string') return content;
  if (
    Array.isArray(content) &&
    content.every((block) => typeof block === 'object' && block !== null && 'type' in block)
  ) {
    return content as ToolMessage['content'];
  }
  try {
    return JSON.stringify(content) ?? '';
  } catch {
    return String(content);
  }
}
