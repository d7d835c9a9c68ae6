/**
 * The JSON-RPC error codes a tool may throw that mean "nothing has run yet: the client must act
 * first, then call again". A guarded server passes such an error through untouched (the client
 * gets the JSON-RPC error with its `data`) and records nothing, whatever the tool's policy; a
 * client policy of {@link mcpToolPolicies} releases its claim on it.
 *
 * - `-32042` `UrlElicitationRequired` (specification 2025-11-25, "Elicitation", URL mode): the
 *   user must open a URL (authorise, pay, sign in) before the tool can do anything. SDK 1.32's
 *   `McpServer` sends it as a JSON-RPC error instead of an `isError` result, the only handler
 *   error it does not wrap.
 *
 * Every other error a tool throws, an `McpError` of another code included, is turned by the SDK
 * into an `isError` result, which is the tool's failure (see `errorResults`).
 */
export const CLIENT_ACTION_ERROR_CODES: readonly number[] = Object.freeze([-32042]);

/**
 * Whether `error` is a JSON-RPC error that asks the client to act before anything runs (its
 * `code` is in {@link CLIENT_ACTION_ERROR_CODES}), e.g. the SDK's `UrlElicitationRequiredError`.
 * Read by shape (`code`), not by class, so an error of another copy of the SDK counts too. For an
 * EFFECTFUL client policy of your own: `isNoEffectError: (e) => isClientActionError(e) || …`.
 */
export function isClientActionError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'number' && CLIENT_ACTION_ERROR_CODES.includes(code);
}
