/**
 * Exit codes of `toolfence` (docs/operations.md, "Exit codes"):
 * 0 done, 1 not found or not resolvable, 2 usage (bad options, refused input, an ambiguous key
 * abbreviation), 3 store unavailable or not set up (a namespace with nothing of toolfence's too),
 * 4 holder alive: the record is in progress under a live lease, its body may still take effect,
 * nothing was settled (wait, or `--force --reason`),
 * 5 a write's result is unknown (it was sent and not answered in time: it may have been applied;
 * reload the record and look before deciding again).
 */
export const ExitCode = {
  done: 0,
  notFound: 1,
  usage: 2,
  storeUnavailable: 3,
  holderAlive: 4,
  outcomeUnknown: 5,
} as const;

export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** A failure the CLI reports with its own exit code and message (already free of secrets). */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode,
  ) {
    super(message);
    this.name = 'CliError';
  }
}
