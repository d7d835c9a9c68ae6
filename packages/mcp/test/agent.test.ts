// End to end: an AI SDK generateText agent with a scripted model calls the effectful refund
// tool of a guarded MCP server (a real McpServer and Client over InMemoryTransport). The host
// loses the step (the model API fails after the refund went through) and retries it from scratch
// in a new host process: a new client guard with an empty store, a new MCP connection to another
// replica of the server. The client forwards its idempotency key in _meta, the server dedupes
// by it: the provider pays once.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Guard, IndeterminateOutcomeError, MemoryStore } from '@toolfence/core';
import { fenceMcpClient, fenceMcpServer, mcpToolPolicies } from '@toolfence/mcp';
import { fenceTools, indeterminateErrorOf, stopOnIndeterminate } from '@toolfence/vercel-ai';
import { generateText, stepCountIs } from 'ai';
import { describe, expect, it } from 'vitest';
import { scriptedModel } from '../../../test/support/scripted-model.js';
import { aiSdkToolsOf } from './ai-sdk-tools.js';
import { createPaymentsServer, PaymentsProvider } from './payments-server.js';

const refundStep = [{ toolName: 'refund_order', input: { orderId: 'A-100', amountCents: 3000 } }];

/** A model that answers the refund step, then fails the next model call when `failAfterTool`. */
function hostModel(failAfterTool: boolean) {
  const model = scriptedModel([refundStep, 'Refunded 30.00 on A-100.']);
  const generate = model.doGenerate.bind(model);
  let calls = 0;
  model.doGenerate = async (options) => {
    calls += 1;
    if (failAfterTool && calls === 2) throw new Error('model API: 503 Service Unavailable');
    return generate(options);
  };
  return model;
}

interface Deployment {
  readonly provider: PaymentsProvider;
  /** One host process: its own MCP connection to a new server replica and its own client guard. */
  host(options: {
    guarded: boolean;
    failAfterTool: boolean;
  }): Promise<Awaited<ReturnType<typeof generateText>>>;
}

function deployment(): Deployment {
  const provider = new PaymentsProvider();
  // The server replicas share one store (RedisStore / PostgresStore in production).
  const serverGuard = new Guard({ store: new MemoryStore(), tenant: 'acme' });
  let replica = 0;
  return {
    provider,
    async host({ guarded, failAfterTool }) {
      replica += 1;
      const server = createPaymentsServer(provider, `payments-${replica}`);
      if (guarded) fenceMcpServer(server, { guard: serverGuard });
      const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
      await server.connect(serverTransport);
      const client = new Client({ name: 'support-agent', version: '1.0.0' });
      await client.connect(clientTransport);
      if (guarded) fenceMcpClient(client);
      const { tools, listed } = await aiSdkToolsOf(client);
      const hostTools = guarded
        ? fenceTools(tools, {
            // A new process: nothing of the first attempt is in this guard's store.
            guard: new Guard({ store: new MemoryStore() }),
            policies: mcpToolPolicies(listed, { trustAnnotations: true }), // our own server
            runId: 'ticket-4711',
          })
        : tools;
      try {
        return await generateText({
          model: hostModel(failAfterTool),
          tools: hostTools,
          prompt: 'Refund order A-100, 30.00.',
          stopWhen: [stepCountIs(5), stopOnIndeterminate()],
        });
      } finally {
        await client.close();
      }
    },
  };
}

/** The host's retry loop: a failed run is run again from the start, once. */
async function runWithOneRetry(deploy: Deployment, guarded: boolean) {
  try {
    return await deploy.host({ guarded, failAfterTool: true });
  } catch {
    return await deploy.host({ guarded, failAfterTool: false });
  }
}

describe('an AI SDK agent on a guarded MCP server', () => {
  it('the host retries a lost step: without toolfence the provider pays twice, with it once', async () => {
    const unguarded = deployment();
    await runWithOneRetry(unguarded, false);
    expect(unguarded.provider.refunds).toHaveLength(2);

    const guarded = deployment();
    const result = await runWithOneRetry(guarded, true);
    expect(guarded.provider.refunds).toHaveLength(1);
    expect(result.text).toBe('Refunded 30.00 on A-100.');
    const output = result.steps[0]?.toolResults[0]?.output as { structuredContent?: unknown };
    expect(output.structuredContent).toEqual({ refundId: 're_1', orderId: 'A-100', amountCents: 3000 });
  });

  it("the server's indeterminate refund stops the run; the retry stops again, nothing paid twice", async () => {
    const deploy = deployment();
    deploy.provider.failAfterPaying = true;
    for (let run = 0; run < 2; run++) {
      const result = await deploy.host({ guarded: true, failAfterTool: false });
      const error = indeterminateErrorOf(result);
      expect(IndeterminateOutcomeError.isInstance(error)).toBe(true);
      expect(error?.tool).toBe('refund_order');
      // The run ended after the tool step: the model never got to answer.
      expect(result.steps).toHaveLength(1);
    }
    expect(deploy.provider.refunds).toHaveLength(1);
  });
});
