import type { z } from 'zod';
import type { JsonText } from '../../domain/json.ts';
import type { Principal, ServiceFacade, StreamItem } from '../../application/index.ts';
import type { ContractFamily, StreamContract, UnaryContract } from './contract.ts';
import type { ProtocolVersion } from './versions.ts';

export type { Permission, V03Codec } from './contract.ts';

/** What methods may ask of the Agent Card (kept narrow so the card can list methods without a cycle). */
export interface CardSource {
  extendedCard(principal: Principal, version: ProtocolVersion): Record<string, unknown>;
  openRpc(): Record<string, unknown>;
}

export interface CallContext {
  principal: Principal;
  version: ProtocolVersion;
  /** Aborted when the client cancels the request or goes away. */
  signal: AbortSignal;
  correlationId: string;
  card: CardSource;
  /** Resume position for SubscribeToTask (HTTP Last-Event-ID). */
  lastEventSeq?: number | undefined;
}

/** A contract bound to the facade: one row of the server's method table (unary). */
export interface UnaryMethod<P extends z.ZodType = z.ZodType, R extends z.ZodType = z.ZodType> extends UnaryContract<
  P,
  R
> {
  /** A result that came as JSON text (a stored snapshot) is sent as that text where it can be. */
  call(facade: ServiceFacade, params: z.output<P>, ctx: CallContext): Promise<z.input<R> | JsonText<z.input<R>>>;
}

/** A streaming contract bound to the facade. */
export interface StreamMethod<P extends z.ZodType = z.ZodType, R extends z.ZodType = z.ZodType> extends StreamContract<
  P,
  R
> {
  call(facade: ServiceFacade, params: z.output<P>, ctx: CallContext): Promise<AsyncIterable<StreamItem>>;
}

export type MethodDef<P extends z.ZodType = z.ZodType, R extends z.ZodType = z.ZodType> =
  UnaryMethod<P, R> | StreamMethod<P, R>;

/** Binds a unary contract to what serves it. */
export function bindUnary<P extends z.ZodType, R extends z.ZodType>(
  contract: UnaryContract<P, R>,
  call: UnaryMethod<P, R>['call'],
): UnaryMethod<P, R> {
  return { ...contract, call };
}

/** Binds a streaming contract to what serves it. */
export function bindStream<P extends z.ZodType, R extends z.ZodType>(
  contract: StreamContract<P, R>,
  call: StreamMethod<P, R>['call'],
): StreamMethod<P, R> {
  return { ...contract, call };
}

/** What serves one row: a unary row's handler returns its result, a stream's its events. */
export type HandlerOf<C> =
  C extends UnaryContract<infer P extends z.ZodType, infer R extends z.ZodType>
    ? UnaryMethod<P, R>['call']
    : C extends StreamContract<infer P extends z.ZodType, infer R extends z.ZodType>
      ? StreamMethod<P, R>['call']
      : never;

/** A family's handlers: one per row, under the row's own key, typed by the row's schemas. */
export type FamilyHandlers<F extends ContractFamily> = { readonly [K in keyof F]: HandlerOf<F[K]> };

/**
 * Binds a whole family to what serves it, in one call whose handler object is typed against the
 * family: a row without a handler, or a handler without a row, does not compile. The handler
 * object's keys are the family's, so "find references" on a contract row reaches its handler.
 */
export function bindFamily<F extends ContractFamily>(
  family: F,
  // NoInfer: the family alone decides F, so the handlers are checked against it, never widen it.
  handlers: NoInfer<FamilyHandlers<F>>,
): readonly MethodDef[] {
  const calls: Readonly<Record<string, unknown>> = handlers;
  return Object.entries(family).map(([key, contract]) => {
    const call = calls[key];
    // Unreachable when the call compiles; a clear stop at start-up if a cast ever hides a gap.
    if (typeof call !== 'function') throw new Error(`${contract.name} has no handler in its family's binding`);
    // FamilyHandlers paired this row with a handler of its own schemas; a list of rows forgets them.
    return { ...contract, call } as MethodDef;
  });
}

export type { ParamsOf, ResultOf } from './contract.ts';
