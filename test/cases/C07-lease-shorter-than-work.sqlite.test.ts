// Field case C07 (docs/field-cases.md) on SQLiteStore; the scenario, written once for every store, is
// test/cases/scenarios/c07.ts. Lease deadlines are judged by the store's clock.
import { storeForFile, storeNames, uniqueName } from '../support/stores.js';
import { describeC07 } from './scenarios/c07.js';

describeC07(storeNames.sqlite, storeForFile('sqlite', 'c07'), uniqueName('r'));
