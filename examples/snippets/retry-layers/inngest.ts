// docs/retry-layers.md: a toolfence stop inside an Inngest step becomes Inngest's
// NonRetriableError, so the engine does not retry it. Inngest's `step` and error class are
// parameters here, typed as Inngest documents them (inngest is not installed in this workspace).
import { type Agent, run } from '@openai/agents';
import { stopErrorOf } from '@toolfence/openai-agents';

/** What the handler uses of Inngest's `step`. */
interface Step {
  run<T>(id: string, action: () => Promise<T>): Promise<T>;
}
/** Inngest's `NonRetriableError` (`import { NonRetriableError } from 'inngest'`). */
type NonRetriableErrorClass = new (message: string, options?: { cause?: unknown }) => Error;

export async function answerTicket(
  step: Step,
  NonRetriableError: NonRetriableErrorClass,
  agent: Agent,
  input: string,
  context: unknown,
) {
  // #region inngest
  return step.run('answer-ticket', async () => {
    try {
      return (await run(agent, input, { context })).finalOutput;
    } catch (error) {
      const stop = stopErrorOf(error);
      if (stop !== undefined) throw new NonRetriableError(stop.message, { cause: stop });
      throw error; // anything else: the engine's retries as usual
    }
  });
  // #endregion inngest
}
