// Field case C07 (shared/cases/C07-lease-shorter-than-work.md) on MemoryStore (a new one per test).
import { MemoryStore } from '@toolfence/core';
import { describeC07 } from './scenarios/c07.js';

describeC07('MemoryStore', () => new MemoryStore(), 'r');
