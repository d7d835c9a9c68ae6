import { defaultServerConditions } from 'vite';
import { defineConfig } from 'vitest/config';

// Tests import the workspace packages from their TypeScript sources (the
// "@toolfence/source" export condition), so no build is needed to test.
const conditions = ['@toolfence/source', ...defaultServerConditions];

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions, externalConditions: ['@toolfence/source'] } },
  test: {
    include: ['packages/*/src/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 30_000,
    // Most files wait on servers, timers and child processes rather than the CPU: four at a time
    // fit two cores (vitest's default, cores - 1, runs one file at a time here).
    maxWorkers: 4,
    // The JSON report is what .ci/run reads to print its closing "N passed, M failed" line.
    reporters: ['default', ['json', { outputFile: '.tmp/vitest-results.json' }]],
    hookTimeout: 60_000,
  },
});
