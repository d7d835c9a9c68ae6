// Fault suite on DynamoDB (a dynalite of the run behind a stalling proxy; the ledger on REDIS_URL):
// SIGKILL / SIGSTOP / every connection dropped / delayed renewals / dynalite restarted empty /
// frozen store. See fault-suite.ts and docs/faults.md.
import { faultSuite } from './fault-suite.js';

faultSuite('dynamodb');
