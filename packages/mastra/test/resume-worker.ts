// A second (and third) process: resumes one suspended run of the refund workflow (approved) on
// the shared LibSQL snapshots, fenced on RedisStore (or plain), when its parent says go. Run by
// resume-processes.test.ts with tsx --conditions=@toolfence/source on Node 24.
//   argv: <redisUrl> <prefix> <dbFile> <runId> <refundsFile> <fenced|plain>
// The snapshot store has no resume claim (see storageWithoutResumeClaims), so Mastra itself does
// not keep the second resume out.
import { createInterface } from 'node:readline';
import { RedisStore } from '@toolfence/stores/redis';
import { Redis } from 'ioredis';
import { Payments, recordingGuard, refundWorkflow, storageWithoutResumeClaims } from './support.js';

const [redisUrl, prefix, dbFile, runId, refundsFile, mode] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string,
  string,
];
const client = new Redis(redisUrl);
const store = new RedisStore({ client, prefix });
const events: { type: string }[] = [];
const payments = new Payments(refundsFile);
payments.delayMs = 200;
const guard = mode === 'fenced' ? recordingGuard(store, events as never) : undefined;
const { mastra, workflow } = refundWorkflow({ payments, guard, dbFile });
await storageWithoutResumeClaims(mastra, 300);
const run = await workflow.createRun({ runId });
process.stdout.write('ready\n');
// Both processes resume at once: the parent writes "go" when each is ready.
await new Promise<void>((resolve) => {
  const lines = createInterface({ input: process.stdin });
  lines.on('line', (line) => {
    if (line === 'go') {
      lines.close();
      resolve();
    }
  });
});
let outcome: Record<string, unknown>;
try {
  const result = await run.resume({ step: 'approve', resumeData: { approved: true } });
  outcome = { status: result.status, result: result.status === 'success' ? result.result : undefined };
} catch (error) {
  outcome = { status: 'threw', message: (error as Error).message };
}
process.stdout.write(`${JSON.stringify({ ...outcome, events: events.map((event) => event.type) })}\n`);
await store.close();
await client.quit();
process.exit(0);
