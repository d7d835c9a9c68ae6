// Fault suite on PostgreSQL: 4 worker processes, SIGKILL / SIGSTOP / pg_terminate_backend / delayed renewals,
// and the checks of checks.ts over the whole history (see docs/faults.md).
import { afterAll, describe, expect, it } from 'vitest';
import {
  FAULT_KINDS,
  type FaultRunReport,
  killAllWorkers,
  runFaults,
  summarize,
  writeLastRun,
} from './harness.js';

afterAll(() => {
  killAllWorkers();
});

describe('faults on PostgreSQL', () => {
  it('2,000 calls and 50 faults: no duplicate execution, no lost call, every stale result fenced', async () => {
    const report: FaultRunReport = await runFaults({
      store: 'postgres',
      calls: 2000,
      faults: 50,
      log: (line) => console.log(`[faults] ${line}`),
    });
    console.log(`[faults] ${summarize(report)}`);
    console.log(
      `[faults] ${JSON.stringify({
        checks: report.checks,
        answers: report.answers,
        deliveries: report.deliveries,
        renewalsDelayed: report.renewalsDelayed,
        connectionsKilled: report.connectionsKilled,
        ownClaims: report.ownClaims,
        indeterminateUnexecutedAfterFailedClaim: report.indeterminateUnexecutedAfterFailedClaim,
      })}`,
    );
    for (const violation of report.violations) console.log(`[faults] violation: ${violation}`);
    await writeLastRun(report);

    expect(report.calls).toBeGreaterThanOrEqual(2000);
    expect(report.faultsTotal).toBeGreaterThanOrEqual(50);
    for (const kind of FAULT_KINDS) expect(report.faults[kind], kind).toBeGreaterThanOrEqual(10);
    expect(report.unexpectedWorkerExits).toBe(0);
    // At most one execution per EFFECTFUL key; at most maxAttempts, one per fence, per IDEMPOTENT key.
    expect(report.duplicates).toBe(0);
    // Every call answered (completed, deduplicated, indeterminate, abandoned), as the store agrees.
    expect(report.lost).toBe(0);
    // One recorded result per completed key: the highest fence's; no superseded result got in.
    expect(report.checks.wrongRecords).toBe(0);
    expect(report.checks.supersededRecorded).toBe(0);
    // Late results of superseded attempts did happen, and were rejected by their fence.
    expect(report.staleFenced).toBeGreaterThan(0);
    expect(report.violations).toEqual([]);
  }, 300_000);
});
