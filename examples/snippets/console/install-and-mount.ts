// docs/console.md, "install-and-mount": compiled by npm run typecheck, copied there by scripts/snippets.ts --write.
import type { IncomingMessage } from 'node:http';
import type { Guard } from '@toolfence/core';

declare const guard: Guard;
declare function sessionUser(
  request: IncomingMessage,
): Promise<{ email: string; name: string; isSupport: boolean; tenants: string[] } | null>;

// #region install-and-mount
import { createConsoleHandler } from '@toolfence/console';

const console_ = createConsoleHandler({
  guard, // your Guard: its codec encodes outcomes, its onEvent gets tool.resolved
  basePath: '/admin/toolfence',
  authorize: async (request) => {
    const user = await sessionUser(request); // your own authentication
    if (user === null || !user.isSupport) return null; // -> 401
    return { id: user.email, name: user.name, tenants: user.tenants }; // or tenants: '*'
  },
  csrfSecret: process.env.CONSOLE_SECRET, // >= 32 bytes; needed when several processes serve it
});
// #endregion install-and-mount

export { console_ };
