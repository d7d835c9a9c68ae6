// A migration's text, cut into the part that runs in its transaction and its online steps.
//
// A line `-- @online <kind> <label>` starts a step that runs after the migration's transaction
// commits, outside any transaction, so that a large table is migrated without holding a lock
// that blocks the claims of running stores:
//   batched <label>     an UPDATE with `{{batch_limit}}`, repeated (each its own transaction)
//                       until it changes no row;
//   statement <label>   one statement (a DO block, say), run once; a DROP INDEX CONCURRENTLY
//                       drops plainly on a small table, as an index build does;
//   index <placeholder> a CREATE INDEX CONCURRENTLY IF NOT EXISTS of the index the placeholder
//                       names; an invalid index an interrupted build left behind is dropped first.
// Every statement of a migration with online steps must be safe to run again: an interrupted
// migration is not recorded, and the next ensureSchema() runs it again from its first line.

/** One online step of a migration. */
export interface OnlineStep {
  readonly kind: 'batched' | 'statement' | 'index';
  /** What the step does (`backfill updated_at`), or for an index the placeholder naming it. */
  readonly label: string;
  readonly text: string;
}

/** A migration as ensureSchema runs it. */
export interface MigrationPlan {
  /** Runs in the migration's transaction (and records it there when there are no steps). */
  readonly head: string;
  readonly steps: readonly OnlineStep[];
}

const stepLine = /^-- @online (batched|statement|index) (.+)$/;

/** @throws Error on a step of an unknown kind or without a statement (a bug in a .sql file). */
export function planMigration(text: string, file: string): MigrationPlan {
  const lines = text.split('\n');
  const head: string[] = [];
  const steps: { kind: OnlineStep['kind']; label: string; lines: string[] }[] = [];
  for (const line of lines) {
    const match = stepLine.exec(line);
    if (match) {
      steps.push({ kind: match[1] as OnlineStep['kind'], label: match[2]!.trim(), lines: [] });
    } else if (line.startsWith('-- @online')) {
      throw new Error(`${file}: unknown online step: ${line}`);
    } else {
      (steps.at(-1)?.lines ?? head).push(line);
    }
  }
  return {
    head: head.join('\n'),
    steps: steps.map((step) => {
      const body = step.lines
        .filter((line) => !/^\s*--/.test(line))
        .join('\n')
        .trim();
      if (body === '') throw new Error(`${file}: the online step "${step.label}" has no statement`);
      if (step.kind === 'batched' && !body.includes('{{batch_limit}}')) {
        throw new Error(`${file}: the batched step "${step.label}" has no {{batch_limit}}`);
      }
      return { kind: step.kind, label: step.label, text: body };
    }),
  };
}
