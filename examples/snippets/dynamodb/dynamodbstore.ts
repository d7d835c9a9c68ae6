// docs/dynamodb.md, "dynamodbstore": compiled by npm run typecheck, copied there by scripts/snippets.ts --write.

// #region dynamodbstore
import { Guard } from '@toolfence/core';
import { DynamoDBStore } from '@toolfence/stores/dynamodb';

// The store makes its own client (and destroys it on close()) ...
const store = new DynamoDBStore({ clientConfig: { region: 'eu-west-1' }, tableName: 'toolfence' });
// ... or uses yours, which it never destroys:
// new DynamoDBStore({ client: new DynamoDBClient({ region: 'eu-west-1' }), tableName: 'toolfence' });
await store.ensureSchema(); // or create the table with your infrastructure code (below)
const guard = new Guard({ store });
// #endregion dynamodbstore

export { guard };
