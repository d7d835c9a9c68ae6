#!/usr/bin/env node
// The `toolfence` executable (package.json "bin"): see main.ts and docs/operations.md.
import { main } from './main.js';

process.exitCode = await main(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: process.env,
});
