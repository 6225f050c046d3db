import type { z } from 'zod';
import type { Principal, ServiceFacade, StreamItem } from '../../application/index.js';
import type { Permission } from '../../domain/permissions.js';
import type { ProtoMessageName } from './proto-names.js';
import type { ExtensionVersion, ProtocolVersion } from './versions.js';

/** What a method needs the caller to be allowed to do (the role table is in domain/permissions). */
export type { Permission };

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

/** How a standard method looks to a v0.3 peer. */
export interface V03Codec {
  /** The v0.3 wire name, when it differs from every name of the row. */
  name?: string;
  params: z.ZodType;
  decode(params: never): unknown;
  encode(result: never): unknown;
}

interface MethodBase<P extends z.ZodType, R extends z.ZodType> {
  /** The canonical wire name, written only here. */
  name: string;
  /** Other names that reach the same row (the seed's names for standard operations). */
  aliases?: readonly string[];
  surface: 'a2a' | 'extension';
  summary: string;
  permission: Permission;
  params: P;
  /** For unary methods the response; for streams the schema of one event. */
  result: R;
  v03?: V03Codec;
  /** Standard methods: the proto request message, whose proto field names are accepted too. */
  proto?: ProtoMessageName;
  /** Extension methods: the extension minor version that added it (default 1.0). */
  since?: ExtensionVersion;
}

export interface UnaryMethod<P extends z.ZodType = z.ZodType, R extends z.ZodType = z.ZodType> extends MethodBase<P, R> {
  kind: 'unary';
  call(facade: ServiceFacade, params: z.output<P>, ctx: CallContext): Promise<z.input<R>>;
}

export interface StreamMethod<P extends z.ZodType = z.ZodType, R extends z.ZodType = z.ZodType> extends MethodBase<P, R> {
  kind: 'stream';
  call(facade: ServiceFacade, params: z.output<P>, ctx: CallContext): Promise<AsyncIterable<StreamItem>>;
}

export type MethodDef<P extends z.ZodType = z.ZodType, R extends z.ZodType = z.ZodType> = UnaryMethod<P, R> | StreamMethod<P, R>;

/** One row of the method table (unary). */
export function defineMethod<P extends z.ZodType, R extends z.ZodType>(def: Omit<UnaryMethod<P, R>, 'kind'>): UnaryMethod<P, R> {
  return { ...def, kind: 'unary' };
}

/** One row of the method table (streaming: SSE over HTTP, notifications over stdio). */
export function defineStream<P extends z.ZodType, R extends z.ZodType>(def: Omit<StreamMethod<P, R>, 'kind'>): StreamMethod<P, R> {
  return { ...def, kind: 'stream' };
}

/** Params a client sends for a method. */
export type ParamsOf<M> = M extends MethodDef<infer P, z.ZodType> ? z.input<P> : never;
/** What a client gets back from a unary method, or per event from a stream. */
export type ResultOf<M> = M extends MethodDef<z.ZodType, infer R> ? z.output<R> : never;
