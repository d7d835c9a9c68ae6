// Runs the AI SDK adapter's tests against AI SDK 7 (see run.sh, which installs it with Node 24
// outside the workspace and sets TOOLFENCE_AI7_DIR). `ai` and `ai/test` are aliased to that
// install; everything else (vitest, @toolfence/* from source, zod) resolves as in the root config.
import { join } from 'node:path';
import { defineConfig, type ViteUserConfig } from 'vitest/config';
import rootConfig from '../../vitest.config.js';

const ai7Directory = process.env.TOOLFENCE_AI7_DIR;
if (ai7Directory === undefined || ai7Directory === '') {
  throw new Error(
    'TOOLFENCE_AI7_DIR must name the directory AI SDK 7 is installed in (run test/vercel-ai-v7/run.sh)',
  );
}
const ai = join(ai7Directory, 'node_modules', 'ai', 'dist');
const root = rootConfig as ViteUserConfig;

// Spread, not mergeConfig: mergeConfig concatenates `include` and `reporters`.
export default defineConfig({
  ...root,
  resolve: {
    ...root.resolve,
    alias: [
      { find: /^ai$/, replacement: join(ai, 'index.js') },
      { find: /^ai\/test$/, replacement: join(ai, 'test', 'index.js') },
    ],
  },
  test: {
    ...root.test,
    include: ['packages/vercel-ai/test/**/*.test.ts', 'test/cases/C02-*.test.ts'],
    // Its own report, beside the workspace run's .tmp/vitest-results.json.
    reporters: ['default', ['json', { outputFile: '.tmp/vitest-results-vercel-ai-v7.json' }]],
  },
});
