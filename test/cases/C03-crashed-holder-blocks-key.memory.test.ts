// Field case C03 (docs/field-cases.md) on MemoryStore; the scenario, written once for every store, is
// test/cases/scenarios/c03.ts. Lease deadlines are judged by the store's clock.
import { storeForFile, storeNames, uniqueName } from '../support/stores.js';
import { describeC03 } from './scenarios/c03.js';

describeC03(storeNames.memory, storeForFile('memory', 'c03'), uniqueName('acme'));
