// Field case C07 (docs/field-cases.md) on MemoryStore; the scenario, written once for every store, is
// test/cases/scenarios/c07.ts. Lease deadlines are judged by the store's clock.
import { storeForFile, storeNames, uniqueName } from '../support/stores.js';
import { describeC07 } from './scenarios/c07.js';

describeC07(storeNames.memory, storeForFile('memory', 'c07'), uniqueName('r'));
