// The reconcile scenarios (test/reconcile/scenarios.ts) on the postgres store of test/support/stores.ts.
import { storeForFile } from '../support/stores.js';
import { describeReconcile } from './scenarios.js';

const storeOf = storeForFile('postgres', 'reconcile');
describeReconcile('postgres', storeOf, 'postgres');
