// `npm run bench [-- FILTER...] [--json FILE] [--plots [--records LIST]]`: runs the benchmarks,
// prints one Markdown table of figures against baselines measured in the same run; `--plots`
// runs the cost curves and draws them under bench/plots/. See bench/README.md.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { curves } from './lib/curves.js';
import { writePlots } from './lib/plots.js';
import { formatTable, notes, type Row, verdict } from './lib/report.js';
import { connectPostgres, connectRedis, ServiceMissingError } from './lib/services.js';
import { scale } from './lib/workloads.js';
import { collapsePostgresSuite, collapseRedisSuite } from './suites/collapse.js';
import { curveClusterSuite } from './suites/curve-cluster.js';
import {
  curveConcurrencyMemorySuite,
  curveConcurrencyPostgresSuite,
  curveConcurrencyRedisSuite,
  curveConcurrencySqliteSuite,
} from './suites/curve-concurrency.js';
import { curveRecordsPostgresSuite, curveRecordsRedisSuite, setRecordSizes } from './suites/curve-records.js';
import { footprintPostgresSuite, footprintRedisSuite } from './suites/footprint.js';
import { keysSuite } from './suites/keys.js';
import { memorySuite } from './suites/memory.js';
import { peerSuite } from './suites/peer.js';
import { peerDynamoSuite } from './suites/peer-dynamodb.js';
import { postgresSuite } from './suites/postgres.js';
import { redisSuite } from './suites/redis.js';
import { sqliteSuite } from './suites/sqlite.js';
import { telemetrySuite } from './suites/telemetry.js';

type Service = 'redis' | 'postgres';

interface Suite {
  /** Dash-separated words; a filter selects the suites that have it as one of their words. */
  readonly id: string;
  readonly services: readonly Service[];
  readonly run: () => Promise<Row[]>;
}

const suites: readonly Suite[] = [
  { id: 'keys', services: [], run: keysSuite },
  { id: 'memory', services: [], run: memorySuite },
  { id: 'redis', services: ['redis'], run: redisSuite },
  { id: 'peer', services: ['redis'], run: peerSuite },
  { id: 'dynamodb', services: [], run: peerDynamoSuite },
  { id: 'postgres', services: ['postgres'], run: postgresSuite },
  { id: 'sqlite', services: [], run: sqliteSuite },
  { id: 'collapse-redis', services: ['redis'], run: collapseRedisSuite },
  { id: 'collapse-postgres', services: ['postgres'], run: collapsePostgresSuite },
  { id: 'footprint-redis', services: ['redis'], run: footprintRedisSuite },
  { id: 'footprint-postgres', services: ['postgres'], run: footprintPostgresSuite },
  { id: 'telemetry', services: [], run: telemetrySuite },
  // The cost curves: run by --plots (or a filter `curve`), drawn under bench/plots/ by --plots.
  { id: 'curve-concurrency-memory', services: [], run: curveConcurrencyMemorySuite },
  { id: 'curve-concurrency-redis', services: ['redis'], run: curveConcurrencyRedisSuite },
  { id: 'curve-concurrency-postgres', services: ['postgres'], run: curveConcurrencyPostgresSuite },
  { id: 'curve-concurrency-sqlite', services: [], run: curveConcurrencySqliteSuite },
  // Private redis-servers (started here from the redis-server binary): no REDIS_URL needed.
  { id: 'curve-records-redis', services: [], run: curveRecordsRedisSuite },
  { id: 'curve-records-postgres', services: ['postgres'], run: curveRecordsPostgresSuite },
  { id: 'curve-cluster-redis', services: [], run: curveClusterSuite },
];

const plotsDirectory = join(dirname(fileURLToPath(import.meta.url)), 'plots');

const isCurve = (suite: Suite) => suite.id.split('-').includes('curve');

interface Arguments {
  readonly filters: string[];
  readonly jsonFile: string | undefined;
  readonly plots: boolean;
}

function parseArguments(argv: readonly string[]): Arguments {
  const filters: string[] = [];
  let jsonFile: string | undefined;
  let plots = false;
  for (let index = 0; index < argv.length; index++) {
    const argument = argv[index]!;
    if (argument === '--json') {
      jsonFile = argv[++index];
      if (jsonFile === undefined) throw new Error('--json needs a file name');
    } else if (argument.startsWith('--json=')) {
      jsonFile = argument.slice('--json='.length);
    } else if (argument === '--plots') {
      plots = true;
    } else if (argument === '--records' || argument.startsWith('--records=')) {
      const list = argument === '--records' ? argv[++index] : argument.slice('--records='.length);
      if (list === undefined) throw new Error('--records needs a list, e.g. 10k,100k,1M');
      setRecordSizes(list);
    } else if (argument === '--help' || argument === '-h') {
      console.log(
        `usage: npm run bench [-- [FILTER...] [--json FILE] [--plots [--records 10k,100k,1M]]]\nsuites: ${suites.map((suite) => suite.id).join(', ')}\n` +
          'A filter selects every suite that has it as a dash-separated word (redis: redis, collapse-redis, footprint-redis).\n' +
          'The curve suites run only with --plots (which draws them under bench/plots/) or a filter `curve`.',
      );
      process.exit(0);
    } else if (argument.startsWith('-')) {
      throw new Error(`unknown option ${argument}`);
    } else {
      filters.push(argument);
    }
  }
  return { filters, jsonFile, plots };
}

function loadAverage(): string {
  return loadavg()
    .map((load) => load.toFixed(2))
    .join(' ');
}

async function describeMachine(services: ReadonlySet<Service>): Promise<string> {
  const parts = [
    `date: ${new Date().toString()}`,
    `machine: ${cpus().length} CPU (${cpus()[0]?.model.trim() ?? 'unknown'}), ${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM`,
    `node ${process.version}`,
    `load average at start ${loadAverage()}`,
  ];
  try {
    parts.push(execFileSync('uname', ['-sr'], { encoding: 'utf8' }).trim());
  } catch {
    // uname is informative only.
  }
  if (services.has('redis')) {
    const client = await connectRedis();
    const info = await client.info('server');
    client.disconnect();
    parts.push(`Redis ${/redis_version:(\S+)/.exec(info)?.[1] ?? '?'}`);
  }
  if (services.has('postgres')) {
    const pool = await connectPostgres(1);
    const result = await pool.query<{ server_version: string }>('SHOW server_version');
    await pool.end();
    parts.push(`PostgreSQL ${result.rows[0]?.server_version ?? '?'}`);
  }
  if (scale !== 1) parts.push(`BENCH_SCALE=${scale}`);
  return parts.join('; ');
}

async function main(): Promise<void> {
  const { filters, jsonFile, plots } = parseArguments(process.argv.slice(2));
  const curvesWanted = plots || filters.includes('curve');
  // The curves take minutes: only --plots or a filter `curve` runs them, and then nothing else.
  const selected = suites.filter(
    (suite) =>
      isCurve(suite) === curvesWanted &&
      (filters.length === 0 || filters.some((filter) => suite.id.split('-').includes(filter))),
  );
  if (selected.length === 0) {
    throw new Error(
      `no suite matches ${filters.join(' ')}; suites: ${suites.map((suite) => suite.id).join(', ')}`,
    );
  }
  const services = new Set(selected.flatMap((suite) => suite.services));
  // Check every needed service before measuring anything: a missing one is an error, not a skip.
  console.log(await describeMachine(services));

  const rows: Row[] = [];
  const startedMs = Date.now();
  for (const suite of selected) {
    const suiteStartedMs = Date.now();
    process.stderr.write(`running ${suite.id}...`);
    let suiteRows: Row[] | undefined;
    for (let attempt = 1; suiteRows === undefined; attempt++) {
      try {
        suiteRows = await suite.run();
      } catch (error) {
        // Other work on a shared machine (a test terminating every backend, say) can break a
        // suite: it is run again, at most 3 times in all, and the report says so.
        if (error instanceof ServiceMissingError || attempt >= 3) throw error;
        notes.push(`${suite.id}: attempt ${attempt} failed (${(error as Error).message}); it was run again.`);
        process.stderr.write(` attempt ${attempt} failed, running it again...`);
        await new Promise((resolve) => setTimeout(resolve, 2000));
      }
    }
    process.stderr.write(` ${((Date.now() - suiteStartedMs) / 1000).toFixed(1)} s\n`);
    rows.push(...suiteRows);
  }
  console.log('');
  console.log(formatTable(rows));
  const judged = rows.filter((line) => verdict(line) !== null);
  const met = judged.filter((line) => verdict(line) === true).length;
  console.log('');
  console.log(
    `${met} of ${judged.length} targets met; ${((Date.now() - startedMs) / 1000).toFixed(0)} s. ` +
      'ratio = toolfence ÷ baseline (medians over rounds, measured in this run).',
  );
  console.log(`load average at end ${loadAverage()}`);
  for (const note of notes) console.log(`note: ${note}`);
  if (plots) {
    for (const file of await writePlots(curves, plotsDirectory))
      console.log(`wrote ${relative(process.cwd(), file)}`);
  }
  if (jsonFile !== undefined) {
    writeFileSync(jsonFile, `${JSON.stringify(rows, null, 2)}\n`);
    console.log(`wrote ${jsonFile}`);
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    if (error instanceof ServiceMissingError) {
      console.error(`\nbench: ${error.message}`);
    } else {
      console.error('\nbench failed:', error);
    }
    process.exit(1);
  },
);
