#!/usr/bin/env node
// The `toolfence` executable (package.json "bin"): see main.ts and docs/operations.md.
import { main } from './main.js';
import { maskerFor } from './secrets.js';

// Nothing escapes unmasked, not even a failure no command caught (a driver's late rejection): its
// stack is printed with every secret of the arguments and the environment masked, and exit 3.
const masker = maskerFor(process.argv.slice(2), process.env);
const fatal = (error: unknown) => {
  const text = error instanceof Error ? (error.stack ?? `${error.name}: ${error.message}`) : String(error);
  process.stderr.write(`toolfence: unexpected failure: ${masker.mask(text)}\n`);
  process.exit(3);
};
process.on('uncaughtException', fatal);
process.on('unhandledRejection', fatal);

// `toolfence list | head -1`: once the reader has gone, stdout fails with EPIPE. The command's own
// exit code still stands (1 would read as "not found"); what it would have printed is dropped.
let stdoutClosed = false;
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (stdoutClosed || error.code === 'EPIPE') {
    stdoutClosed = true;
    return;
  }
  throw error;
});

process.exitCode = await main(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: process.env,
});
