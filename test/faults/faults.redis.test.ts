// Fault suite on Redis (a private redis-server of the run behind a stalling proxy; the ledger on
// REDIS_URL): SIGKILL / SIGSTOP / CLIENT KILL / delayed renewals / FLUSHALL and restart empty /
// frozen store. See fault-suite.ts and docs/faults.md.
import { faultSuite } from './fault-suite.js';

faultSuite('redis');
