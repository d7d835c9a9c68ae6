// toolfence with a LangChain agent, offline: a scripted model drives a real `createAgent`.
//
//   npx tsx --conditions=@toolfence/source examples/langchain-agent.ts
//
// 1. The model asks to open the same ticket twice in one step: one ticket is opened.
// 2. The agent is interrupted for a human answer and resumed: the finished ticket call is
//    replayed, not run again.
// 3. The ticket API drops the connection after opening the ticket: the run stops with
//    IndeterminateOutcomeError; an operator checks and settles it; the thread resumes.
//
// In production, replace MemoryStore with RedisStore or PostgresStore (shared by every worker)
// and fakeModel() with your chat model. Nothing else changes.
import { tool } from '@langchain/core/tools';
import { Command, interrupt, MemorySaver } from '@langchain/langgraph';
import { Guard, Idempotency, IndeterminateOutcomeError, MemoryStore } from '@toolfence/core';
import { toolfenceMiddleware } from '@toolfence/langchain';
import { AIMessage, createAgent, fakeModel, ToolMessage } from 'langchain';
import { z } from 'zod';

// --- The tools, as they already are in your agent ----------------------------------------------

const ticketSystem: string[] = [];
let dropNextResponse = false;

const createTicket = tool(
  async ({ title }) => {
    ticketSystem.push(title); // the effect
    const id = `T-${ticketSystem.length}`;
    if (dropNextResponse) {
      dropNextResponse = false;
      throw Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
    }
    return `Ticket ${id} opened: ${title}`;
  },
  {
    name: 'create_ticket',
    description: 'Open a support ticket.',
    schema: z.object({ title: z.string() }),
  },
);

const askHuman = tool(async ({ question }) => `The human answered: ${interrupt({ question })}`, {
  name: 'ask_human',
  description: 'Ask the human a question and wait for the answer.',
  schema: z.object({ question: z.string() }),
});

// --- toolfence: one guard, one policy table, one middleware ---------------------------------------

const guard = new Guard({
  store: new MemoryStore(),
  onEvent: (event) => console.log(`    [toolfence] ${event.type} ${event.tool} (call ${event.callId})`),
});

const middleware = toolfenceMiddleware({
  guard,
  policies: {
    // Opening a ticket twice opens two tickets: at most once, never retried blindly.
    create_ticket: { kind: Idempotency.EFFECTFUL, keyArguments: ['title'] },
  },
});

function agentWith(model: ReturnType<typeof fakeModel>) {
  return createAgent({
    model,
    tools: [createTicket, askHuman],
    middleware: [middleware],
    checkpointer: new MemorySaver(),
    version: 'v1', // runs a step's tool calls together: the mode in which a resume re-runs them
  });
}

function printToolMessages(messages: unknown[]): void {
  for (const message of messages) {
    if (ToolMessage.isInstance(message)) console.log(`  ${message.tool_call_id}: ${message.content}`);
  }
}

// --- 1. the same call twice in one step ---------------------------------------------------------

console.log('1. The model asks for the same ticket twice in one step');
{
  const model = fakeModel()
    .respondWithTools([
      { name: 'create_ticket', args: { title: 'Printer on fire' }, id: 'call_1' },
      { name: 'create_ticket', args: { title: 'Printer on fire' }, id: 'call_2' },
    ])
    .respond(new AIMessage('Your ticket is open.'));
  const result = await agentWith(model).invoke(
    { messages: [{ role: 'user', content: 'The printer is on fire!' }] },
    { configurable: { thread_id: 'thread-1' } },
  );
  printToolMessages(result.messages);
  console.log(`  tickets in the ticket system: ${ticketSystem.length}\n`);
}

// --- 2. interrupt and resume ---------------------------------------------------------------------

console.log('2. Interrupted for a human answer, then resumed');
{
  const model = fakeModel()
    .respondWithTools([
      { name: 'create_ticket', args: { title: 'Coffee machine leaking' }, id: 'call_3' },
      { name: 'ask_human', args: { question: 'Which floor?' }, id: 'call_4' },
    ])
    .respond(new AIMessage('Ticket open; facilities are on their way.'));
  const agent = agentWith(model);
  const config = { configurable: { thread_id: 'thread-2' } };
  const paused = await agent.invoke(
    { messages: [{ role: 'user', content: 'The coffee machine leaks.' }] },
    config,
  );
  console.log(`  interrupted: ${JSON.stringify(paused.__interrupt__?.[0]?.value)}`);
  await new Promise((resolve) => setTimeout(resolve, 50)); // the human takes a moment
  const resumed = await agent.invoke(new Command({ resume: '3rd floor' }), config);
  printToolMessages(resumed.messages);
  console.log(`  tickets in the ticket system: ${ticketSystem.length} (one per request)\n`);
}

// --- 3. an indeterminate outcome -----------------------------------------------------------------

console.log('3. The ticket API drops the connection after opening the ticket');
{
  const model = fakeModel()
    .respondWithTools([{ name: 'create_ticket', args: { title: 'Door badge broken' }, id: 'call_5' }])
    .respond(new AIMessage('Your badge ticket is open.'));
  const agent = agentWith(model);
  const config = { configurable: { thread_id: 'thread-3' } };
  dropNextResponse = true;
  try {
    await agent.invoke({ messages: [{ role: 'user', content: 'My badge does not open the door.' }] }, config);
  } catch (error) {
    if (!IndeterminateOutcomeError.isInstance(error)) throw error;
    console.log(`  run stopped: ${error.name} (tool ${error.tool}, reason ${error.reasonType})`);
    // An operator looks in the ticket system, finds the ticket, and records what happened.
    const found = `T-${ticketSystem.indexOf('Door badge broken') + 1}`;
    await guard.resolve(error.key, { outcome: `Ticket ${found} opened: Door badge broken (verified)` });
    console.log(`  operator settled it: ${found} exists`);
  }
  const resumed = await agent.invoke(null, config); // resume the thread where it stopped
  printToolMessages(resumed.messages);
  console.log(`  model: ${resumed.messages.at(-1)?.content}`);
  console.log(`  tickets in the ticket system: ${ticketSystem.length} (the badge ticket once)`);
}
