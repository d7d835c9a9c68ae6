/** Quotes an SQLite identifier: wrapped in double quotes, inner quotes doubled. */
export function quoteSqliteName(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
