// Runs @toolfence/mastra's tests on Node 24 against the @mastra/core that run.sh installs into
// .tmp/mastra and links into packages/mastra/node_modules; everything else (vitest,
// @toolfence/* from source) resolves as in the root config.
import { defineConfig, type ViteUserConfig } from 'vitest/config';
import rootConfig from '../../vitest.config.js';

const root = rootConfig as ViteUserConfig;

// Spread, not mergeConfig: mergeConfig concatenates `include` and `reporters`.
export default defineConfig({
  ...root,
  test: {
    ...root.test,
    include: ['packages/mastra/test/**/*.test.ts'],
    // The root config leaves packages/mastra out (Node 20); this lane is where it runs.
    exclude: ['**/node_modules/**'],
    // Its own report, beside the workspace run's .tmp/vitest-results.json.
    reporters: ['default', ['json', { outputFile: '.tmp/vitest-results-mastra.json' }]],
  },
});
