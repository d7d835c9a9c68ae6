import { createHash } from 'node:crypto';

/**
 * Longest schema or table name accepted, in UTF-8 bytes. PostgreSQL truncates identifiers to 63
 * bytes; derived names (`<table>_migrations`, `<table>_notify_settle`, ...) append up to 15.
 */
export const maxIdentifierBytes = 48;

/**
 * Checks a schema or table name. Any character but NUL is allowed (names are always quoted),
 * so `Tool Fence` and `a"b` work; an empty or over-long name is refused rather than silently
 * truncated by PostgreSQL into a name that collides with another.
 * @throws TypeError when the name cannot be used.
 */
export function validateIdentifier(kind: 'schema' | 'table', name: unknown): string {
  if (typeof name !== 'string' || name.length === 0) {
    throw new TypeError(`PostgresStore: the ${kind} name must be a non-empty string`);
  }
  if (name.includes('\u0000')) {
    throw new TypeError(`PostgresStore: the ${kind} name must not contain NUL`);
  }
  if (Buffer.byteLength(name, 'utf8') > maxIdentifierBytes) {
    throw new TypeError(
      `PostgresStore: the ${kind} name must be at most ${maxIdentifierBytes} bytes (UTF-8)`,
    );
  }
  if (Buffer.from(name, 'utf8').toString('utf8') !== name) {
    throw new TypeError(`PostgresStore: the ${kind} name must be well-formed Unicode`);
  }
  return name;
}

/** Quotes an identifier for SQL text: wrapped in double quotes, inner quotes doubled. */
export function quoteIdentifier(name: string): string {
  return '"' + name.replaceAll('"', '""') + '"';
}

/** Quotes a string literal for SQL text (standard_conforming_strings). */
function quoteLiteral(value: string): string {
  return "'" + value.replaceAll("'", "''") + "'";
}

/** Every name a store's SQL uses, quoted and ready to substitute into the templates. */
export interface PostgresNames {
  readonly schema: string;
  readonly table: string;
  /** Unquoted LISTEN/NOTIFY channel: `toolfence_` + 20 hex digits, a valid bare identifier. */
  readonly channel: string;
  /** Text whose hash keys the advisory lock ensureSchema() takes. */
  readonly lockName: string;
  /** Placeholder name → replacement, for {@link renderSql}. */
  readonly placeholders: Readonly<Record<string, string>>;
}

/** Derives and quotes the names of one store's objects. */
export function postgresNames(schema: string, table: string): PostgresNames {
  const qualify = (name: string) => `${quoteIdentifier(schema)}.${quoteIdentifier(name)}`;
  // One channel per records table; a digest keeps it short and free of characters that would
  // need quoting, whatever the schema and table are called.
  const channel = `toolfence_${createHash('sha256').update(`${schema}\u0000${table}`).digest('hex').slice(0, 20)}`;
  return {
    schema: quoteIdentifier(schema),
    table: qualify(table),
    channel,
    lockName: `toolfence:${channel}`,
    placeholders: {
      schema: quoteIdentifier(schema),
      table: qualify(table),
      // The table as a string literal (`'{{table}}'::regclass` breaks on a name with a quote).
      table_literal: quoteLiteral(qualify(table)),
      migrations_table: qualify(`${table}_migrations`),
      expires_index: quoteIdentifier(`${table}_expires_at`),
      notify_function: qualify(`${table}_notify_settle`),
      notify_update_trigger: quoteIdentifier(`${table}_notify_update`),
      notify_delete_trigger: quoteIdentifier(`${table}_notify_delete`),
      channel: quoteLiteral(channel),
      // migration 0004 (the operator listing)
      resolutions_table: qualify(`${table}_resolutions`),
      list_tenant_index: quoteIdentifier(`${table}_list_tenant`),
      list_all_index: quoteIdentifier(`${table}_list_all`),
      resolutions_key_index: quoteIdentifier(`${table}_res_key`),
      resolutions_expires_index: quoteIdentifier(`${table}_res_expires`),
      // migration 0005 (the claim decision as a function)
      claim_function: qualify(`${table}_claim`),
      // migration 0008 (a complete that is a HOT update)
      sweep_index: quoteIdentifier(`${table}_sweep_at`),
      // migration 0009 (the records an operator must look at)
      attention_index: quoteIdentifier(`${table}_attention`),
      // migration 0006 (resolving a record in progress)
      resolutions_table_literal: quoteLiteral(qualify(`${table}_resolutions`)),
      resolutions_from_state_check: quoteIdentifier(`${table}_res_from_state`),
      // migration 0010 (approvals: the states before a claim, at fence and attempt 0)
      state_check: quoteIdentifier(`${table}_state`),
      fence_check: quoteIdentifier(`${table}_fence`),
      attempt_check: quoteIdentifier(`${table}_attempt`),
    },
  };
}

/** Replaces every `{{name}}` in a template; an unknown placeholder is a bug and throws. */
export function renderSql(template: string, placeholders: Readonly<Record<string, string>>): string {
  return template.replace(/\{\{([a-z_]+)\}\}/g, (match, name: string) => {
    const value = placeholders[name];
    if (value === undefined) throw new Error(`PostgresStore: unknown SQL placeholder ${match}`);
    return value;
  });
}
