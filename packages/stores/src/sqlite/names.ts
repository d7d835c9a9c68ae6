// The quoted names of one store's tables and indexes, and the SQL rendered with them.

/** Quotes an identifier: wrapped in double quotes, inner quotes doubled. */
export function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

export function render(template: string, placeholders: Readonly<Record<string, string>>): string {
  return template.replace(/\{\{([a-z_]+)\}\}/g, (_, name: string) => {
    const value = placeholders[name];
    if (value === undefined) throw new Error(`SQLiteStore: unknown placeholder {{${name}}}`);
    return value;
  });
}

/** The `{{placeholders}}` of statements/*.sql for the records table `table`. */
export function sqlitePlaceholders(table: string): Readonly<Record<string, string>> {
  return {
    table: quoteIdentifier(table),
    migrations_table: quoteIdentifier(`${table}_migrations`),
    expires_index: quoteIdentifier(`${table}_expires_at_ms`),
    resolutions_table: quoteIdentifier(`${table}_resolutions`),
    list_tenant_index: quoteIdentifier(`${table}_list_tenant`),
    list_all_index: quoteIdentifier(`${table}_list_all`),
    resolutions_index: quoteIdentifier(`${table}_resolutions_key`),
    resolutions_expires_index: quoteIdentifier(`${table}_resolutions_expires`),
    // migration 0004 (resolving a record in progress): the journal rebuilt
    resolutions_table_next: quoteIdentifier(`${table}_resolutions_next`),
    resolutions_table_name: quoteIdentifier(`${table}_resolutions`),
    // migration 0005 (the sweep bound)
    sweep_index: quoteIdentifier(`${table}_sweep_at_ms`),
    // migration 0006 (approvals): the records table rebuilt
    table_next: quoteIdentifier(`${table}_next`),
    table_name: quoteIdentifier(table),
  };
}
