// The Mastra rows of the demo table. @mastra/core 1.x needs Node >= 22.13, so `npm run demo`
// (the workspace's Node 20) prints them as run elsewhere: test/mastra/run.sh installs Mastra with
// Node 24 and runs examples/mastra/demo-row.ts, which prints them without and with toolfence.
import { skippedRow } from './table.js';

/** The Mastra rows: number, scenario, tool. */
export const MASTRA_ROWS = [
  ['2c', 'the model sends the same refund twice', 'refund_payment'],
  ['4c', 'lost refund reply, the step retried 2x', 'refund_payment'],
] as const;

/** The lines `npm run demo` prints for the Mastra rows. */
export function mastraRowLines(nodeVersion = process.versions.node): string {
  const reason = `run by bash test/mastra/run.sh (Node 24): @mastra/core needs Node >= 22.13, this is ${nodeVersion}`;
  return MASTRA_ROWS.map(([id, title, tool]) => skippedRow(id, title, 'Mastra', tool, reason)).join('\n');
}
