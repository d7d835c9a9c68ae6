// What a failed DynamoDB request means for the store contract ("When the backend fails" in
// packages/core/docs/store-contract.md): an outage, the input, or the table's set-up.
import { StoreConfigurationError, StoreInputError, StoreUnavailableError } from '@toolfence/core/store';

export type DynamoFailureKind = 'unavailable' | 'input' | 'configuration';

/**
 * Errors that say: try later. Throttling (`ProvisionedThroughputExceededException`,
 * `ThrottlingException`, `RequestLimitExceeded`: the SDK retried them within its attempts and the
 * deadline, then gave up), the service failing (`InternalServerError`, `ServiceUnavailable`), a
 * conflict with a transaction of someone else's, and the SDK's own timeouts and aborts.
 */
const unavailableNames = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'InternalServerError',
  'ServiceUnavailable',
  'ServiceUnavailableException',
  'TransactionConflictException',
  'LimitExceededException',
  'TimeoutError',
  'RequestTimeout',
  'RequestTimeoutException',
  'AbortError',
]);

/** The table, its indexes or the credentials are not what the store needs: no retry fixes it. */
const configurationNames = new Set([
  'ResourceNotFoundException',
  'AccessDeniedException',
  'UnrecognizedClientException',
  'InvalidSignatureException',
  'MissingAuthenticationTokenException',
  'IncompleteSignature',
  'ResourceInUseException',
  'UnknownOperationException',
]);

/** Node's socket and DNS errors: the endpoint cannot be reached. */
const networkCodes = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'ERR_HTTP2_STREAM_ERROR',
]);

function field(error: unknown, name: string): unknown {
  return typeof error === 'object' && error !== null ? (error as Record<string, unknown>)[name] : undefined;
}

/** How a failed request is reported. Anything not recognised is an outage: never a guessed answer. */
export function classifyFailure(error: unknown): DynamoFailureKind {
  const name = field(error, 'name');
  if (typeof name === 'string') {
    if (configurationNames.has(name)) return 'configuration';
    if (unavailableNames.has(name)) return 'unavailable';
    if (name === 'ValidationException' || name === 'ItemCollectionSizeLimitExceededException') {
      const message = String(field(error, 'message') ?? '');
      // The item or a key is too large, or a value the service refuses: caused by the input.
      if (/size|too large|too long|length|exceed/i.test(message)) return 'input';
      // Anything else about our own requests (a key schema of another table, a missing index).
      return 'configuration';
    }
  }
  const code = field(error, 'code');
  if (typeof code === 'string' && networkCodes.has(code)) return 'unavailable';
  const metadata = field(error, '$metadata') as { httpStatusCode?: number } | undefined;
  if (metadata?.httpStatusCode !== undefined && metadata.httpStatusCode >= 500) return 'unavailable';
  return 'unavailable';
}

/** The typed error of a failed request of `operation` on the store at `address`. */
export function toStoreError(operation: string, error: unknown, address: string): Error {
  if (
    StoreInputError.isInstance(error) ||
    StoreUnavailableError.isInstance(error) ||
    StoreConfigurationError.isInstance(error)
  ) {
    return error as Error;
  }
  const name = String(field(error, 'name') ?? 'Error');
  const message = String(field(error, 'message') ?? error);
  switch (classifyFailure(error)) {
    case 'input':
      return new StoreInputError('value', `DynamoDB refused it (${name}: ${message})`, { cause: error });
    case 'configuration':
      return new StoreConfigurationError(
        'DynamoDBStore',
        name === 'ResourceNotFoundException'
          ? `${address}: the table or one of its indexes does not exist; call ensureSchema() or create it as docs/dynamodb.md describes (${message})`
          : `${address}: ${name}: ${message}`,
        { cause: error },
      );
    default:
      return new StoreUnavailableError(operation, `${address}: ${name}: ${message}`, { cause: error });
  }
}
