// The long fault soak: the fault suite of fault-suite.ts (faults.redis/postgres.test.ts) with
// more calls and more faults, for as long as asked. Run from the repository root:
//
//   npm run soak -- --store both --duration 600
//   npx tsx --conditions=@toolfence/source test/faults/soak.ts --store redis --calls 20000 --faults 500
//
// Flags: --store redis|postgres|both (default both), --duration <seconds> per store (default
// 300), --calls <n> at least (default 5000), --faults <n> at least (default 200), --lease <ms>
// (default 500), --workers <n> (default 4), --concurrency <n> (default 36), --fault-interval
// <ms> (default 250), --kinds <kind,kind,...> (default: every kind of harness.ts FAULT_KINDS, or
// the FAULT_KINDS environment variable), --seed <n>, --no-write (do not update
// test/faults/last-run.json). Faults are paced over the duration (and the calls), so --faults
// sets how many land; --fault-interval is the shortest mean gap between two.
// Exits 1 when any store shows a duplicate execution (either check) or a lost call.
import { parseArgs } from 'node:util';
import {
  type FaultKind,
  killAllWorkers,
  parseFaultKinds,
  runFaults,
  summarize,
  writeLastRun,
} from './harness.js';
import type { StoreKind } from './protocol.js';

const { values } = parseArgs({
  options: {
    store: { type: 'string', default: 'both' },
    duration: { type: 'string', default: '300' },
    calls: { type: 'string', default: '5000' },
    faults: { type: 'string', default: '200' },
    lease: { type: 'string', default: '500' },
    workers: { type: 'string', default: '4' },
    concurrency: { type: 'string', default: '36' },
    'fault-interval': { type: 'string', default: '250' },
    seed: { type: 'string' },
    kinds: { type: 'string' },
    'no-write': { type: 'boolean', default: false },
  },
});

function positive(name: string, text: string | undefined): number {
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0) {
    console.error(`--${name} must be a positive number, got ${text}`);
    process.exit(2);
  }
  return value;
}

const stores: StoreKind[] =
  values.store === 'both'
    ? ['redis', 'postgres']
    : values.store === 'redis' || values.store === 'postgres'
      ? [values.store]
      : [];
if (stores.length === 0) {
  console.error(`--store must be redis, postgres or both, got ${values.store}`);
  process.exit(2);
}

let kinds: readonly FaultKind[];
try {
  kinds = parseFaultKinds(values.kinds ?? process.env.FAULT_KINDS);
} catch (error) {
  console.error(`--kinds: ${(error as Error).message}`);
  process.exit(2);
}

process.on('SIGINT', () => {
  killAllWorkers();
  process.exit(130);
});

let failed = false;
try {
  for (const store of stores) {
    const report = await runFaults({
      store,
      calls: positive('calls', values.calls),
      faults: positive('faults', values.faults),
      durationMs: positive('duration', values.duration) * 1000,
      leaseMs: positive('lease', values.lease),
      workers: positive('workers', values.workers),
      concurrency: positive('concurrency', values.concurrency),
      faultIntervalMs: positive('fault-interval', values['fault-interval']),
      kinds,
      ...(values.seed === undefined ? {} : { seed: positive('seed', values.seed) }),
      log: (line) => console.log(`[soak] ${line}`),
    });
    console.log(summarize(report));
    console.log(
      JSON.stringify({
        checks: report.checks,
        answers: report.answers,
        deliveries: report.deliveries,
        renewalsDelayed: report.renewalsDelayed,
        connectionsKilled: report.connectionsKilled,
        recordLosses: report.recordLosses,
        freezes: report.freezes,
        ownClaims: report.ownClaims,
        indeterminateUnexecutedAfterFailedClaim: report.indeterminateUnexecutedAfterFailedClaim,
      }),
    );
    for (const violation of report.violations) console.log(`violation: ${violation}`);
    if (!values['no-write']) await writeLastRun(report);
    if (report.duplicates !== 0 || report.lost !== 0 || report.violations.length > 0) failed = true;
  }
} finally {
  killAllWorkers();
}
process.exit(failed ? 1 : 0);
