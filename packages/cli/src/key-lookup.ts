// Keys as people copy them: the full key, a unique prefix (`9c1f0a`), or the shortened form a
// narrow table or a chat message shows (`9c1f…e07a`, `9c1f...e07a`). As git does with commit ids,
// an abbreviation names a key only when exactly one record of the tenant matches it; an
// ambiguous one is refused with the candidates. The lookup pages through the tenant's listing
// (every state): the operator's rare path, taken only when the exact key has no record.
import type { Guard, ListedRecord } from '@toolfence/core';
import { checkRecordRef, MAX_LIST_LIMIT } from '@toolfence/core/store';
import type { CommandContext } from './context.js';
import { visible } from './escape.js';
import { CliError, ExitCode } from './exit-codes.js';
import { ALL_STATES } from './place.js';

/** Shortest abbreviation accepted (characters of the prefix and suffix together), as git's. */
export const MIN_ABBREVIATION = 4;
/** The most candidates an ambiguous abbreviation lists. */
const SHOWN_CANDIDATES = 10;

interface Abbreviation {
  readonly head: string;
  readonly tail: string;
}

/** `head…tail` or `head...tail` split; a plain text is a prefix. */
export function abbreviationOf(given: string): Abbreviation | undefined {
  const match = /^(.*?)(?:…|\.\.\.)(.*)$/su.exec(given);
  const parts = match === null ? { head: given, tail: '' } : { head: match[1] ?? '', tail: match[2] ?? '' };
  return parts.head.length + parts.tail.length >= MIN_ABBREVIATION ? parts : undefined;
}

/** The key as the user gave it, checked before anything connects. @throws CliError (usage) */
export function checkKeyArgument(given: string): void {
  try {
    checkRecordRef({ tenant: 't', key: given });
  } catch (error) {
    throw new CliError(`KEY: ${(error as Error).message}`, ExitCode.usage);
  }
}

/**
 * The full key `given` names in the tenant: itself when it has a record or a resolution history,
 * else the one record key that the abbreviation matches, else `given` (nothing found).
 * @throws CliError (usage) when the abbreviation matches more than one record
 */
export async function findKey(guard: Guard, context: CommandContext, given: string): Promise<string> {
  if ((await guard.inspect(given)) !== null) return given;
  const abbreviation = abbreviationOf(given);
  const hasEllipsis = abbreviation !== undefined && abbreviation.head.length < given.length;
  if (abbreviation === undefined) return given;
  if (!hasEllipsis && (await guard.resolutions(given)).length > 0) return given;
  const matches: ListedRecord[] = [];
  let cursor: string | undefined;
  do {
    const page = await guard.list({
      tenant: context.tenant,
      states: [...ALL_STATES],
      limit: MAX_LIST_LIMIT,
      ...(cursor === undefined ? {} : { cursor }),
    });
    for (const record of page.records) {
      if (
        record.key.length >= abbreviation.head.length + abbreviation.tail.length &&
        record.key.startsWith(abbreviation.head) &&
        record.key.endsWith(abbreviation.tail)
      ) {
        matches.push(record);
      }
    }
    cursor = page.cursor;
  } while (cursor !== undefined);
  const keys = [...new Set(matches.map((record) => record.key))];
  if (keys.length === 1) {
    context.output.err(`toolfence: ${visible(given)} is ${visible(keys[0] as string)}`);
    return keys[0] as string;
  }
  if (keys.length > 1) {
    context.output.err(
      `toolfence: ${visible(given)} is ambiguous: ${keys.length} records of tenant ${JSON.stringify(context.tenant)} match it:`,
    );
    for (const record of matches.slice(0, SHOWN_CANDIDATES)) {
      context.output.err(`  ${visible(record.key)}  ${record.state}  ${visible(record.tool)}`);
    }
    if (keys.length > SHOWN_CANDIDATES) context.output.err(`  … and ${keys.length - SHOWN_CANDIDATES} more`);
    throw new CliError(`give more of the key than ${visible(given)}: nothing was done`, ExitCode.usage);
  }
  return given;
}
