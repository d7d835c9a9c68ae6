// Fault suite on PostgreSQL (the run's own schema, behind a stalling proxy): SIGKILL / SIGSTOP /
// pg_terminate_backend / delayed renewals / TRUNCATE of the records table / frozen store. See
// fault-suite.ts and docs/faults.md.
import { faultSuite } from './fault-suite.js';

faultSuite('postgres');
