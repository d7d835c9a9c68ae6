// The telemetry scenarios (scenarios.ts) on MemoryStore.
import { MemoryStore } from '@toolfence/core';
import { describeTelemetry } from './scenarios.js';

const store = new MemoryStore();
describeTelemetry('MemoryStore', () => store, 'MemoryStore');
