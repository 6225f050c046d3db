import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The request a piece of work runs for, carried along its asynchronous calls: the log adds its id
 * to every line written on the request's behalf (services, repositories, the turn it started)
 * without each call passing it down, and error answers use it as their correlation id.
 */
export interface RequestScope {
  /** The client's `X-Request-Id` (when valid) or one made for the request. */
  readonly requestId: string;
}

const scopes = new AsyncLocalStorage<RequestScope>();

/** Runs `fn` (and everything it starts) on behalf of the request. */
export function inRequestScope<T>(scope: RequestScope, fn: () => T): T {
  return scopes.run(scope, fn);
}

/** The request the caller runs for, if any. */
export function currentRequest(): RequestScope | undefined {
  return scopes.getStore();
}
