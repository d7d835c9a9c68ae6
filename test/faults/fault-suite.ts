// The CI fault run of one store, shared by faults.redis.test.ts and faults.postgres.test.ts:
// 4 worker processes, every fault kind of harness.ts (or those named by FAULT_KINDS, e.g.
// FAULT_KINDS=record-loss,store-freeze), and the checks of checks.ts over the whole history
// (see docs/faults.md).
import { afterAll, describe, expect, it } from 'vitest';
import {
  type FaultRunReport,
  killAllWorkers,
  parseFaultKinds,
  runFaults,
  summarize,
  writeLastRun,
} from './harness.js';
import type { StoreKind } from './protocol.js';

const storeNames: Record<StoreKind, string> = {
  redis: 'Redis',
  postgres: 'PostgreSQL',
  dynamodb: 'DynamoDB (dynalite)',
};

/** Calls and faults of a CI run; each kind gets at least MIN_FAULTS_PER_KIND of them. */
const CALLS = 2000;
const MIN_FAULTS_PER_KIND = 10;

export function faultSuite(store: StoreKind): void {
  afterAll(() => {
    killAllWorkers();
  });

  describe(`faults on ${storeNames[store]}`, () => {
    const kinds = parseFaultKinds(process.env.FAULT_KINDS);
    // The kinds take turns, so each gets at least faults / kinds of them.
    const faults = Math.max(50, kinds.length * MIN_FAULTS_PER_KIND);
    it(`${CALLS} calls and ${faults} faults (${kinds.join(', ')}): no call runs twice, no key runs twice in one life of the store, no lost call, every stale result fenced`, async () => {
      const report: FaultRunReport = await runFaults({
        store,
        calls: CALLS,
        faults,
        kinds,
        log: (line) => console.log(`[faults] ${line}`),
      });
      console.log(`[faults] ${summarize(report)}`);
      console.log(
        `[faults] ${JSON.stringify({
          checks: report.checks,
          index: { ...report.index, violations: undefined },
          answers: report.answers,
          deliveries: report.deliveries,
          renewalsDelayed: report.renewalsDelayed,
          connectionsKilled: report.connectionsKilled,
          recordLosses: report.recordLosses,
          freezes: report.freezes,
          ownClaims: report.ownClaims,
          indeterminateUnexecutedAfterFailedClaim: report.indeterminateUnexecutedAfterFailedClaim,
        })}`,
      );
      for (const violation of report.violations) console.log(`[faults] violation: ${violation}`);
      await writeLastRun(report);

      expect(report.calls).toBeGreaterThanOrEqual(CALLS);
      expect(report.faultsTotal).toBeGreaterThanOrEqual(50);
      for (const kind of kinds) expect(report.faults[kind], kind).toBeGreaterThanOrEqual(MIN_FAULTS_PER_KIND);
      expect(report.unexpectedWorkerExits).toBe(0);
      // (a) One guard.run call never enters its body twice (IDEMPOTENT: at most maxAttempts).
      expect(report.checks.duplicatesInOneCall).toBe(0);
      // (b) Per key and life of the store: one EFFECTFUL execution; one IDEMPOTENT execution per
      // fence, fences up to maxAttempts. Two lives only where a record loss fell between claims.
      expect(report.checks.duplicatesPerLife).toBe(0);
      expect(report.duplicates).toBe(0);
      // (c) Every call answered (completed, deduplicated, indeterminate, abandoned), as the store agrees.
      expect(report.lost).toBe(0);
      // One recorded result per completed key and life: the highest fence's; no superseded result got in.
      expect(report.checks.wrongRecords).toBe(0);
      expect(report.checks.supersededRecorded).toBe(0);
      // (d) Late results of superseded attempts did happen, and were rejected by their fence.
      expect(report.staleFenced).toBeGreaterThan(0);
      if (kinds.includes('record-loss'))
        expect(report.checks.recordLosses).toBeGreaterThanOrEqual(MIN_FAULTS_PER_KIND);
      // The operator's listing agrees with the records: none missing, none phantom or stale.
      expect(report.index.records).toBeGreaterThan(0);
      expect(report.index).toMatchObject({ missing: 0, phantom: 0, repeated: 0, disagreeing: 0 });
      expect(report.index.listed).toBe(report.index.records);
      expect(report.violations).toEqual([]);
    }, 300_000);
  });
}
