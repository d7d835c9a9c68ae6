// @toolfence/cli: the `toolfence` command line. Run it as `npx toolfence …`; `main` runs it in
// a process of your own (tests, a wrapper script).

export { CliError, ExitCode } from './exit-codes.js';
export { type CliIo, main } from './main.js';
export { mask, parseStoreLocation, type StoreKind, type StoreLocation } from './store-url.js';
