// `@toolfence/stores/dynamodb`: the public API of the DynamoDB store. Named exports only.
export {
  type DynamoDBEnsureSchemaResult,
  DynamoDBStore,
  type DynamoDBStoreOptions,
} from './dynamodb-store.js';
