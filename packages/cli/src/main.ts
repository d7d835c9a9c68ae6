// The `toolfence` command line (docs/operations.md): commander parses, the commands run against
// the store the application uses, every printed line is masked of the store's secrets, and the
// exit code says what happened (exit-codes.ts).
import {
  KeyDerivationError,
  OutcomeEncodingError,
  PolicyError,
  StoreConfigurationError,
  StoreInputError,
  StoreUnavailableError,
} from '@toolfence/core';
import { Command, CommanderError, Option } from 'commander';
import { type GlobalOptions, type LocationHolder, type Work, withStore } from './context.js';
import { parseDuration } from './durations.js';
import { jsonLine, safeLine } from './escape.js';
import { CliError, ExitCode } from './exit-codes.js';
import { checkKeyArgument } from './key-lookup.js';
import { type ListFlags, listCommand, statsCommand } from './list-commands.js';
import { migrateCommand } from './migrate-command.js';
import type { Access } from './open-store.js';
import type { Output } from './output.js';
import { maskerFor } from './secrets.js';
import {
  checkSettleInput,
  forgetCommand,
  inspectCommand,
  type SettleFlags,
  settleCommand,
} from './settle-commands.js';

/** What the CLI reads and writes (the process's own streams in bin.ts; pipes in tests). */
export interface CliIo {
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;
  readonly stdin: NodeJS.ReadableStream;
  readonly env: NodeJS.ProcessEnv;
}

const collectValues = (value: string, previous: string[] | undefined) => [...(previous ?? []), value];

function buildProgram(
  io: CliIo,
  output: Output,
  holder: LocationHolder,
  setCode: (code: number) => void,
): Command {
  const program = new Command('toolfence')
    .description('List, inspect and settle the tool calls toolfence keeps (docs/operations.md).')
    .addOption(
      new Option(
        '--store <url>',
        'redis://…, rediss://…, postgres://… or sqlite:PATH (default: TOOLFENCE_STORE)',
      ),
    )
    .option('--prefix <prefix>', 'Redis key prefix of the RedisStore (default toolfence)')
    .option('--schema <schema>', 'PostgreSQL schema of the PostgresStore (default toolfence)')
    .option('--table <table>', 'records table of the PostgresStore or SQLiteStore')
    .option('--tenant <tenant>', 'the tenant (default: TOOLFENCE_TENANT, else "default")')
    .option('--json', 'one JSON object per line')
    .showHelpAfterError()
    // `toolfence list --help` shows --store, --tenant and --json too (they go before or after it).
    .configureHelp({ showGlobalOptions: true })
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.stdout.write(holder.masker.mask(text)),
      writeErr: (text) => io.stderr.write(holder.masker.mask(text)),
    });
  const run: Run = (work, access) => async () => {
    setCode(await withStore(program.opts<GlobalOptions>(), io.env, output, holder, work, access));
  };
  const tenantGiven = () =>
    program.opts<GlobalOptions>().tenant !== undefined || Boolean(io.env.TOOLFENCE_TENANT);

  registerReadCommands(program, run, tenantGiven);
  registerSettleCommands(program, run, tenantGiven, io);
  program
    .command('migrate')
    .description("apply the store's schema migrations, with progress (PostgreSQL: online, resumable)")
    .option('--timeout <duration>', 'give up after this long (30s, 10m, 2h); default: no limit')
    .action((flags: { timeout?: string }) => {
      const timeoutMs = flags.timeout === undefined ? undefined : parseDuration('--timeout', flags.timeout);
      return run(migrateCommand(timeoutMs === undefined ? {} : { timeoutMs }))();
    });
  return program;
}

/** Runs a command's work on the store; `read` opens it read-only where the store can. */
type Run = (work: Work, access?: Access) => () => Promise<void>;

/** list, inspect, stats. */
function registerReadCommands(program: Command, run: Run, tenantGiven: () => boolean): void {
  program
    .command('list')
    .description('records by state, oldest first (default states: indeterminate, abandoned, lease_expired)')
    .option(
      '--state <states>',
      'indeterminate, abandoned, lease_expired, in_progress, completed, awaiting_approval, approved, denied (repeat or comma-separate)',
      collectValues,
    )
    .option('--all-tenants', 'every tenant')
    .option('--tool <tool>', 'only this tool')
    .option(
      '--older-than <duration>',
      'only records in their state for at least this long (with a unit: 30s, 10m, 2h, 1d)',
    )
    .option('--limit <n>', 'most records shown (default 100)')
    .option('--order <order>', 'oldest (default) or newest first')
    .option(
      '--cursor <cursor>',
      'go on from where a listing stopped (the cursor --json or the table printed)',
    )
    .action((flags: ListFlags) => run(listCommand(flags, tenantGiven()), 'read')());
  program
    .command('inspect')
    .description('a record (with its outcome) and its resolution history')
    .argument('<key>', 'the idempotency key, or a unique abbreviation of it (9c1f0a, 9c1f…e07a)')
    .action((key: string) => {
      checkKeyArgument(key);
      return run((_store, guard, context) => inspectCommand(guard, context, key), 'read')();
    });
  program
    .command('stats')
    .description('records per state and tool')
    .option('--all-tenants', 'every tenant')
    .option('--tool <tool>', 'only this tool')
    .action((flags: ListFlags) => run(statsCommand(flags, tenantGiven()), 'read')());
}

/** resolve, release, forget. */
function registerSettleCommands(program: Command, run: Run, tenantGiven: () => boolean, io: CliIo): void {
  program
    .command('resolve')
    .description('the call happened: record its outcome (repeats get it; a stopped run resumes with it)')
    .argument('<key>', 'the idempotency key')
    .requiredOption('--outcome <json>', 'what the call returned, as JSON')
    .option('--by <name>', 'who decides (default: TOOLFENCE_OPERATOR, else your login)')
    .option('--reason <text>', 'why, in your words')
    .option(
      '--retention <duration>',
      "how long the outcome is kept, with a unit: 30m, 12h, 7d (default: the retention the call was claimed with, inspect's retention line); the call may run again after it",
    )
    .option('--fence <n>', 'settle only if the record still has this fence (from inspect; with --owner)')
    .option('--owner <id>', 'settle only if the record still has this owner (from inspect; with --fence)')
    .option('--force', 'settle even a record whose holder still runs (its lease is live); needs --reason')
    .action((key: string, flags: SettleFlags) => {
      checkSettleInput(key, flags, 'resolve');
      return run((_store, guard, context) => settleCommand(guard, context, key, flags, io.env, 'resolve'))();
    });
  program
    .command('release')
    .description('the call did not happen: free the key so the call may run again')
    .argument('<key>', 'the idempotency key')
    .option('--by <name>', 'who decides (default: TOOLFENCE_OPERATOR, else your login)')
    .option('--reason <text>', 'why, in your words')
    .option('--fence <n>', 'settle only if the record still has this fence (from inspect; with --owner)')
    .option('--owner <id>', 'settle only if the record still has this owner (from inspect; with --fence)')
    .option('--force', 'settle even a record whose holder still runs (its lease is live); needs --reason')
    .action((key: string, flags: SettleFlags) => {
      checkSettleInput(key, flags, 'release');
      return run((_store, guard, context) => settleCommand(guard, context, key, flags, io.env, 'release'))();
    });
  program
    .command('forget')
    .description('erase every record of --tenant (asks to confirm unless --yes)')
    .option('--yes', 'do not ask')
    .action((flags: { yes?: boolean }) =>
      run((store, _guard, context) =>
        forgetCommand(store, context, flags.yes === true, io.stdin, tenantGiven()),
      )(),
    );
}

/** Runs the CLI on `argv` (without `node` and the script). Resolves to the exit code. */
export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  const holder: LocationHolder = { location: undefined, masker: maskerFor(argv, io.env) };
  const output: Output = {
    out: (line) => io.stdout.write(`${safeLine(holder.masker.mask(line))}\n`),
    err: (line) => io.stderr.write(`${safeLine(holder.masker.mask(line))}\n`),
    // Exact: only known secrets are masked (a URL in a record's text is the record's).
    json: (value) => io.stdout.write(`${holder.masker.maskKnown(jsonLine(value))}\n`),
  };
  let code: number = ExitCode.done;
  const program = buildProgram(io, output, holder, (value) => {
    code = value;
  });
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return code;
  } catch (error) {
    return report(error, output);
  }
}

/** The store operations the CLI writes with (`resolve` and `release` are both a store's resolve). */
const writes: ReadonlySet<string> = new Set(['resolve', 'release', 'forget']);

function report(error: unknown, output: Output): number {
  if (error instanceof CommanderError) {
    // Commander printed its message (and help) already.
    return error.code === 'commander.helpDisplayed' ||
      error.code === 'commander.version' ||
      error.exitCode === 0
      ? ExitCode.done
      : ExitCode.usage;
  }
  if (error instanceof CliError) {
    output.err(`toolfence: ${error.message}`);
    return error.exitCode;
  }
  const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  if (
    StoreUnavailableError.isOutcomeUnknown(error) &&
    writes.has((error as StoreUnavailableError).operation)
  ) {
    // A write that was sent and not answered may land later; "unavailable"
    // (exit 3) would read as "nothing changed, try again".
    output.err(`toolfence: ${message}`);
    output.err(
      'toolfence: the result is unknown: the store may have applied it. Run `toolfence inspect KEY` and look before you try again.',
    );
    return ExitCode.outcomeUnknown;
  }
  if (StoreUnavailableError.isInstance(error) || StoreConfigurationError.isInstance(error)) {
    output.err(`toolfence: ${message}`);
    return ExitCode.storeUnavailable;
  }
  if (
    StoreInputError.isInstance(error) ||
    OutcomeEncodingError.isInstance(error) ||
    KeyDerivationError.isInstance(error) ||
    PolicyError.isInstance(error) ||
    error instanceof TypeError
  ) {
    output.err(`toolfence: ${message}`);
    return ExitCode.usage;
  }
  output.err(`toolfence: unexpected failure: ${message}`);
  return ExitCode.storeUnavailable;
}
