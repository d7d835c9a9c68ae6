// node --import hook for node-runner.test.ts: any attempt to load vitest fails the run.
import * as nodeModule from 'node:module';

const source = `
export async function resolve(specifier, context, next) {
  if (specifier === 'vitest' || specifier.startsWith('vitest/') || specifier.startsWith('@vitest/')) {
    throw new Error('the node:test entry loaded ' + specifier);
  }
  return next(specifier, context);
}`;
nodeModule.register(`data:text/javascript,${encodeURIComponent(source)}`);
