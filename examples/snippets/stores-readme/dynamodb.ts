// packages/stores/README.md, "dynamodb": compiled by npm run typecheck, copied there by scripts/snippets.ts --write.

// #region dynamodb
import { Guard } from '@toolfence/core';
import { DynamoDBStore } from '@toolfence/stores/dynamodb';

const store = new DynamoDBStore({ clientConfig: { region: 'eu-west-1' }, tableName: 'toolfence' });
await store.ensureSchema(); // or create the table with your infrastructure code
const guard = new Guard({ store });
// #endregion dynamodb

export { guard };
