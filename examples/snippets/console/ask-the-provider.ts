// docs/console.md, "ask-the-provider": compiled by npm run typecheck, copied there by scripts/snippets.ts --write.
import { createConsoleHandler, type ConsoleAuthorize } from '@toolfence/console';
import type { Guard, PolicyMap } from '@toolfence/core';

declare const guard: Guard;
declare const authorize: ConsoleAuthorize;
/** The application's policies by tool name, as its adapters take them (with `reconcile` probes). */
declare const policies: PolicyMap;

// #region ask-the-provider
const console_ = createConsoleHandler({
  guard,
  authorize,
  basePath: '/admin/toolfence',
  policies, // the records of a tool whose policy has a reconcile probe get "Ask the provider"
});
// #endregion ask-the-provider

export { console_ };
