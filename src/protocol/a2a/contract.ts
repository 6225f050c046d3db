import type { z } from 'zod';
import type { MethodScope, Permission } from '../../domain/permissions.ts';
import type { ProtoMessageName } from './proto-names.ts';
import type { ExtensionVersion } from './versions.ts';

/** What a method needs the caller to be allowed to do (the role table is in domain/permissions). */
export type { MethodScope, Permission };

/** How a standard method looks to a v0.3 peer. */
export interface V03Codec {
  /** The v0.3 wire name, when it differs from every name of the row. */
  name?: string;
  params: z.ZodType;
  decode: (params: never) => unknown;
  encode: (result: never) => unknown;
}

interface ContractBase<P extends z.ZodType, R extends z.ZodType> {
  /** The canonical wire name, written only here. */
  name: string;
  /** Other names that reach the same row (the seed's names for standard operations). */
  aliases?: readonly string[];
  surface: 'a2a' | 'extension';
  summary: string;
  permission: Permission;
  /**
   * Where a namespace-level method acts, so which role the dispatcher checks (default `tenant`:
   * the request's tenant, else the caller's default namespace). Ignored for caller- and
   * server-level permissions.
   */
  scope?: MethodScope;
  params: P;
  /** For unary methods the response; for streams the schema of one event. */
  result: R;
  v03?: V03Codec;
  /** Standard methods: the proto request message, whose proto field names are accepted too. */
  proto?: ProtoMessageName;
  /** Extension methods: the extension minor version that added it (default 1.0). */
  since?: ExtensionVersion;
}

/**
 * A method's contract: its names, schemas and permission — all a client needs, and nothing of
 * the server's (the server binds each contract to the facade in `methods/`).
 */
export interface UnaryContract<P extends z.ZodType = z.ZodType, R extends z.ZodType = z.ZodType> extends ContractBase<
  P,
  R
> {
  kind: 'unary';
}

/** A streaming method's contract (SSE over HTTP, notifications over stdio); `result` is one event. */
export interface StreamContract<P extends z.ZodType = z.ZodType, R extends z.ZodType = z.ZodType> extends ContractBase<
  P,
  R
> {
  kind: 'stream';
}

export type MethodContract<P extends z.ZodType = z.ZodType, R extends z.ZodType = z.ZodType> =
  UnaryContract<P, R> | StreamContract<P, R>;

/** The contract of a unary method. */
export function defineContract<P extends z.ZodType, R extends z.ZodType>(
  def: Omit<UnaryContract<P, R>, 'kind'>,
): UnaryContract<P, R> {
  return { ...def, kind: 'unary' };
}

/** The contract of a streaming method. */
export function defineStreamContract<P extends z.ZodType, R extends z.ZodType>(
  def: Omit<StreamContract<P, R>, 'kind'>,
): StreamContract<P, R> {
  return { ...def, kind: 'stream' };
}

/**
 * One family of methods (one contract file): its rows by the name the code calls them, in the
 * table's order. The server binds a family with one call (`bindFamily` in method.ts) whose handlers
 * are typed against these keys; the client, OpenRPC and the reference docs read the same objects.
 */
export type ContractFamily = Readonly<Record<string, MethodContract>>;

/** Params a client sends for a method. */
export type ParamsOf<M> = M extends MethodContract<infer P, z.ZodType> ? z.input<P> : never;
/** What a client gets back from a unary method, or per event from a stream. */
export type ResultOf<M> = M extends MethodContract<z.ZodType, infer R> ? z.output<R> : never;
