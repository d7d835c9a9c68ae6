// The reconcile scenarios (test/reconcile/scenarios.ts) on the redis store of test/support/stores.ts.
import { storeForFile } from '../support/stores.js';
import { describeReconcile } from './scenarios.js';

const storeOf = storeForFile('redis', 'reconcile');
describeReconcile('redis', storeOf, 'redis');
