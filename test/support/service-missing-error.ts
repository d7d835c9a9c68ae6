/**
 * Thrown when a service a test, the fault suite or the benchmark needs (Redis, PostgreSQL) does
 * not answer. Its message names the command that starts the service: a missing server fails the
 * run, it never skips it.
 */
export class ServiceMissingError extends Error {
  override readonly name = 'ServiceMissingError';
}
