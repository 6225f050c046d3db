import type { z } from 'zod';
import type { JsonText } from '../../domain/json.ts';
import type { Principal, ServiceFacade, StreamItem } from '../../application/index.ts';
import type { StreamContract, UnaryContract } from './contract.ts';
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

export type { ParamsOf, ResultOf } from './contract.ts';
