// The console in an Express app: two refunds whose outcome is unknown, waiting for a person.
//
//   npx tsx --conditions=@toolfence/source examples/console.ts [--port 3000]   # then open the printed address
//
// Signed in as "support@example.com" for tenant "acme" (authorize below stands in for your own
// session check). Settle one record with "it happened" and the other with "it did not happen":
// the terminal shows the `tool.resolved` events, and what the run's next replay of each call gets.

import { parseArgs } from 'node:util';
import { createConsoleHandler } from '@toolfence/console';
import { Guard, Idempotency, IndeterminateOutcomeError, MemoryStore } from '@toolfence/core';
import express from 'express';

const refund = {
  kind: Idempotency.EFFECTFUL,
  describe: (args: Record<string, unknown>) => `refund ${String(args.order)} EUR ${String(args.amount)}`,
} as const;

const store = new MemoryStore(); // RedisStore / PostgresStore from @toolfence/stores across processes
const guard = new Guard({
  store,
  tenant: 'acme',
  onEvent: (event) => {
    if (event.type === 'tool.resolved')
      console.log(`resolved ${event.tool} of ${event.runId}:`, event.resolution);
  },
});

async function stopRefund(runId: string, order: string, amount: number): Promise<void> {
  const call = { tool: 'refund', runId, arguments: { order, amount }, policy: refund };
  await guard
    .run(call, async () => {
      throw new Error('the payment provider did not answer within 10 s');
    })
    .catch((error) => {
      if (!(error instanceof IndeterminateOutcomeError)) throw error;
    });
}

await stopRefund('run-1', 'A-100', 30);
await stopRefund('run-2', 'A-200', 45);

const app = express();
app.use(
  '/admin/toolfence',
  createConsoleHandler({
    guard,
    basePath: '/admin/toolfence',
    authorize: () => ({ id: 'support@example.com', name: 'Support', tenants: ['acme'] }),
  }),
);
app.get('/replay/:run', async (request, response) => {
  const order =
    request.params.run === 'run-1' ? { order: 'A-100', amount: 30 } : { order: 'A-200', amount: 45 };
  const call = { tool: 'refund', runId: request.params.run, arguments: order, policy: refund };
  try {
    const value = await guard.run(call, async () => ({ refundId: `re_${Date.now()}`, ranNow: true }));
    response.json({ replay: value });
  } catch (error) {
    response.status(409).json({ stopped: (error as Error).name });
  }
});
const port = Number(parseArgs({ options: { port: { type: 'string', default: '3000' } } }).values.port);
app.listen(port, '127.0.0.1', () => {
  console.log(`console: http://127.0.0.1:${port}/admin/toolfence/`);
  console.log(`replays: http://127.0.0.1:${port}/replay/run-1 and /replay/run-2`);
});
