// The reconcile scenarios (test/reconcile/scenarios.ts) on the memory store of test/support/stores.ts.
import { storeForFile } from '../support/stores.js';
import { describeReconcile } from './scenarios.js';

const storeOf = storeForFile('memory', 'reconcile');
describeReconcile('memory', storeOf, 'memory');
