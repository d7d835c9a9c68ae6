#!/usr/bin/env node
// The `toolfence` executable (package.json "bin"): see main.ts and docs/operations.md.
import { main } from './main.js';

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
