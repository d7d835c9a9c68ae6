// toolfence demo: real LangChain and AI SDK agents, scripted models, a fake payments provider.
// Every scenario runs without and with toolfence; the table shows what each did.
//
//   npm run demo                                   # embedded MemoryStore, offline
//   npm run demo -- --verbose                      # and the guard's event log
//   npm run demo -- --store redis://127.0.0.1:6379  # a real Redis; worker A is a real process, SIGKILLed
//   npm run demo -- --store postgres://postgres@127.0.0.1:5432/test
//   npm run demo -- --store sqlite:./demo.db         # an SQLite file; worker A is a real process, SIGKILLed
//   npm run demo -- --store dynamodb:http://127.0.0.1:4567  # DynamoDB (here dynalite; or dynamodb:eu-west-1)
//
// Exit code 0 when every guarded scenario ends with the expected counts, 1 otherwise, 2 on bad
// usage or an unreachable store.
import { parseArgs } from 'node:util';
import { mastraRowLines } from './demo/mastra-row.js';
import { runScenarios } from './demo/scenarios.js';
import { openStore, StoreUnreachable } from './demo/stores.js';
import { eventLog, header, notes, red, table, verdict } from './demo/table.js';

const LEASE_MS = 600;

async function main(): Promise<number> {
  let options: { store?: string | undefined; verbose?: boolean | undefined; help?: boolean | undefined };
  try {
    options = parseArgs({
      options: {
        store: { type: 'string' },
        verbose: { type: 'boolean', short: 'v' },
        help: { type: 'boolean', short: 'h' },
      },
    }).values;
  } catch (error) {
    console.error(red((error as Error).message));
    return 2;
  }
  if (options.help === true) {
    console.log(
      'usage: npm run demo -- [--store memory|redis://host:port|postgres://user@host:port/db|sqlite:./file.db|dynamodb:<endpoint URL or region>] [--verbose]',
    );
    return 0;
  }
  let demoStore: Awaited<ReturnType<typeof openStore>>;
  try {
    demoStore = await openStore(options.store);
  } catch (error) {
    // StoreUnreachable says what to start; anything else is a bad --store value or a driver error.
    const message =
      error instanceof StoreUnreachable ? error.message : String((error as Error).message ?? error);
    console.error(red(`toolfence demo: ${message}`));
    return 2;
  }
  const startedMs = Date.now();
  try {
    console.log(header(demoStore.label, LEASE_MS));
    const results = await runScenarios({
      store: demoStore.store,
      leaseMs: LEASE_MS,
      newLedger: (name) => demoStore.newLedger(name),
      runKilledWorker: demoStore.runKilledWorker,
    });
    console.log(table(results));
    console.log(mastraRowLines());
    console.log(notes(results));
    if (options.verbose === true) console.log(eventLog(results));
    const result = verdict(results, Date.now() - startedMs);
    console.log(`\n${result.text}`);
    return result.ok ? 0 : 1;
  } catch (error) {
    console.error(red(`\n✗ FAIL: the demo stopped: ${(error as Error).stack ?? error}`));
    return 1;
  } finally {
    await demoStore.close().catch((error: unknown) => console.error(`cleanup failed: ${error}`));
  }
}

process.exit(await main());
