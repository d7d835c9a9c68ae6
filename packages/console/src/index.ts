// The public API of @toolfence/console. Named exports only; everything else is internal.

export { type ConsoleHandler, createConsoleHandler } from './console-handler.js';
export type { ConsoleAuthorize, ConsoleOperator, ConsoleOptions } from './options.js';
export { CONTENT_SECURITY_POLICY } from './security-headers.js';
