// Field case C03 (docs/field-cases.md) on MemoryStore; the scenario is test/cases/scenarios/c03.ts.
import { MemoryStore } from '@toolfence/core';
import { describeC03 } from './scenarios/c03.js';

const store = new MemoryStore();
describeC03('MemoryStore', () => store, 'acme');
