// The Workflow DevKit tests, run by test/workflow-devkit/run.sh from the lane's directory (where
// the engine is installed): the engine's vitest plugin compiles workflows/ ("use step" / "use
// workflow") and runs the runs in this process on the local world.
import { workflow } from '@workflow/vitest';
import { defineConfig } from 'vitest/config';

// No "@toolfence/source" condition here: the engine imports the step bundle natively, where
// Node loads @toolfence/* from their dist (run.sh builds them), and the test must see the same.
export default defineConfig({
  plugins: [workflow()],
  test: {
    include: ['*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    reporters: ['default', ['json', { outputFile: process.env.TOOLFENCE_WORKFLOW_REPORT ?? 'results.json' }]],
  },
});
