import { CliError, ExitCode } from './exit-codes.js';

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * `10m`, `2h`, `30s`, `1d` or `500ms`: a whole number WITH its unit. A bare number is refused: read
 * as milliseconds, `--retention 7` kept a resolved outcome for 7 ms, after which the call it
 * settled could run again. @throws CliError (usage)
 */
export function parseDuration(option: string, text: string): number {
  const match = /^(\d+)(ms|s|m|h|d)$/.exec(text.trim());
  if (match === null) {
    throw new CliError(
      `${option} must be a whole number with its unit (ms, s, m, h or d), like 30s, 10m, 2h or 1d; got ${JSON.stringify(text)}`,
      ExitCode.usage,
    );
  }
  const value = Number(match[1]) * (UNITS[match[2] as string] as number);
  if (!Number.isSafeInteger(value)) throw new CliError(`${option} is too long: ${text}`, ExitCode.usage);
  return value;
}

/** A whole number in `min..max`. @throws CliError (usage) */
export function parseCount(option: string, text: string, min: number, max: number): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new CliError(
      `${option} must be a whole number in ${min}..${max}, got ${JSON.stringify(text)}`,
      ExitCode.usage,
    );
  }
  return value;
}

/** `3d 4h`, `12m 5s`, `800ms`: a short human age. */
export function formatAge(ms: number): string {
  if (ms < 1000) return `${Math.max(0, ms)}ms`;
  const parts: string[] = [];
  let rest = Math.floor(ms / 1000);
  for (const [unit, seconds] of [
    ['d', 86_400],
    ['h', 3600],
    ['m', 60],
    ['s', 1],
  ] as const) {
    if (rest >= seconds && parts.length < 2) {
      parts.push(`${Math.floor(rest / seconds)}${unit}`);
      rest %= seconds;
    }
  }
  return parts.join(' ');
}
