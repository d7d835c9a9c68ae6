// The reconcile scenarios (test/reconcile/scenarios.ts) on the sqlite store of test/support/stores.ts.
import { storeForFile } from '../support/stores.js';
import { describeReconcile } from './scenarios.js';

const storeOf = storeForFile('sqlite', 'reconcile');
describeReconcile('sqlite', storeOf, 'sqlite');
