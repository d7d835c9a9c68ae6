// What "It happened" asks for: the shape of the outcomes the tool returns, read from the newest
// completed call of the same tool in the same tenant (one the tool completed itself when there
// is one, else one an operator resolved). Only the top-level keys and their JSON types are shown,
// never a value: an outcome may hold personal data or a secret.
import type { IdempotencyStore, ListedRecord } from '@toolfence/core';

/** The shape of one recorded outcome, and which call it comes from. */
export interface OutcomeExample {
  /** `{ refundId: string, amount: number }`, `string`, `array`, `nothing (no value)`. */
  readonly shape: string;
  /** When that call completed (epoch ms, store clock). */
  readonly completedAtMs: number | undefined;
  /** Whether an operator stated that outcome (rather than the tool returning it). */
  readonly byOperator: boolean;
}

/** Completed records looked at, newest first, for one whose outcome reads as JSON. */
const LOOKED_AT = 5;
/** Keys shown of an object outcome; the rest are counted. */
const MAX_KEYS = 24;
const MAX_KEY_LENGTH = 48;

function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

function keyText(key: string): string {
  const cut = key.length > MAX_KEY_LENGTH ? `${key.slice(0, MAX_KEY_LENGTH - 1)}…` : key;
  return /^[A-Za-z_$][\w$]*$/.test(cut) ? cut : JSON.stringify(cut);
}

/** The top-level shape of a decoded outcome, without any value. */
export function shapeOf(value: unknown): string {
  if (value === undefined) return 'nothing (the tool returned no value)';
  if (Array.isArray(value)) {
    const first = value[0];
    return value.length === 0 ? 'array (empty)' : `array of ${typeOf(first)}`;
  }
  if (value === null || typeof value !== 'object') return typeOf(value);
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length === 0) return '{}';
  const shown = entries.slice(0, MAX_KEYS).map(([key, each]) => `${keyText(key)}: ${typeOf(each)}`);
  if (entries.length > MAX_KEYS) shown.push(`… ${entries.length - MAX_KEYS} more`);
  return `{ ${shown.join(', ')} }`;
}

function decoded(outcome: string): { value: unknown } | undefined {
  if (outcome === '') return { value: undefined };
  try {
    return { value: JSON.parse(outcome) as unknown };
  } catch {
    return undefined;
  }
}

/**
 * The shape of `tool`'s newest completed outcome in `tenant`, or undefined when there is none
 * (or the store cannot list, or fails: the page is shown without it).
 */
export async function outcomeExample(
  store: IdempotencyStore,
  tenant: string,
  tool: string,
  onError: (error: unknown) => void = () => undefined,
): Promise<OutcomeExample | undefined> {
  if (typeof store.list !== 'function') return undefined;
  try {
    const page = await store.list({ tenant, tool, states: ['completed'], order: 'newest', limit: LOOKED_AT });
    const byTool = (record: ListedRecord) => (record.resolution === undefined ? 0 : 1);
    const candidates = [...page.records].sort((a, b) => byTool(a) - byTool(b));
    for (const candidate of candidates) {
      if (candidate.tenant !== tenant || candidate.tool !== tool) continue;
      const record = await store.get({ tenant, key: candidate.key });
      if (record?.state !== 'completed' || record.outcome === undefined) continue;
      const read = decoded(record.outcome);
      if (read === undefined) continue;
      return {
        shape: shapeOf(read.value),
        completedAtMs: record.updatedAtMs,
        byOperator: record.resolution !== undefined,
      };
    }
  } catch (error) {
    // A hint only: the record page is shown without it.
    onError(error);
  }
  return undefined;
}
