// Field case C07 (docs/field-cases.md, C07) on MemoryStore (a new one per test).
import { MemoryStore } from '@toolfence/core';
import { describeC07 } from './scenarios/c07.js';

describeC07('MemoryStore', () => new MemoryStore(), 'r');
