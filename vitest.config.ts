import { defaultServerConditions } from 'vite';
import { defineConfig } from 'vitest/config';

// Tests import the workspace packages from their TypeScript sources (the
// "@toolfence/source" export condition), so no build is needed to test.
// Without vite's "module" condition: Node never applies it, and the ES builds some packages
// publish under it (the AWS SDK's) use extensionless imports only a bundler resolves.
const conditions = ['@toolfence/source', ...defaultServerConditions.filter((c) => c !== 'module')];

// The two fault suites (2,000 calls and 60 faults each, 4 worker processes) fill both cores for
// minutes: they run through their own command, `npm run test:faults` (CI runs it after
// `npm test`), which sets TOOLFENCE_TEST_SET=faults. `npm test` runs everything else, the fault
// harness's own checks and the lost-reply tests included.
const faultSuites = 'test/faults/faults.*.test.ts';
const faultRun = process.env.TOOLFENCE_TEST_SET === 'faults';
// Tests at production size (a 1,000,000-row table): `npm run test:large` (CI runs it too).
const largeTests = 'test/large/*.test.ts';
const largeRun = process.env.TOOLFENCE_TEST_SET === 'large';

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions, externalConditions: ['@toolfence/source'] } },
  test: {
    include: faultRun
      ? [faultSuites]
      : largeRun
        ? [largeTests]
        : ['packages/*/src/**/*.test.ts', 'packages/*/test/**/*.test.ts', 'test/**/*.test.ts'],
    // Lanes run these on a newer Node or an engine's own runtime (their run.sh): test/workflow-devkit,
    // and @toolfence/mastra (@mastra/core needs Node >= 22.13, outside the root install).
    exclude:
      faultRun || largeRun
        ? []
        : [faultSuites, largeTests, 'test/workflow-devkit/**', 'packages/mastra/**', '**/node_modules/**'],
    testTimeout: 30_000,
    // Most files wait on servers, timers and child processes rather than the CPU: four at a time
    // fit two cores (vitest's default, cores - 1, runs one file at a time here).
    maxWorkers: 4,
    // The JSON report is what .ci/run reads to print its closing "N passed, M failed" line.
    reporters: [
      'default',
      [
        'json',
        {
          outputFile: faultRun
            ? '.tmp/vitest-results-faults.json'
            : largeRun
              ? '.tmp/vitest-results-large.json'
              : '.tmp/vitest-results.json',
        },
      ],
    ],
    hookTimeout: 60_000,
    // A rejection no test awaited fails the run (vitest's default, pinned: issue 30, item 7).
    dangerouslyIgnoreUnhandledErrors: false,
  },
});
