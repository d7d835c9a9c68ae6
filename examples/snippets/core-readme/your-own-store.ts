// packages/core/README.md, "your-own-store": compiled by npm run typecheck, copied there by scripts/snippets.ts --write.
import { MemoryStore as MyStore } from '@toolfence/core';

// #region your-own-store
import { describeStoreConformance } from '@toolfence/core/testing'; // a vitest suite

describeStoreConformance('MyStore', () => new MyStore()); // in a *.test.ts file of yours
// #endregion your-own-store
