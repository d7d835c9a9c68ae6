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
    // The JSON report is what .ci/run reads to print its closing "N passed, M failed" line.
    reporters: ['default', ['json', { outputFile: '.tmp/vitest-results.json' }]],
    hookTimeout: 60_000,
  },
});
