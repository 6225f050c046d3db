import type { JsonText } from '../../domain/json.ts';
import type { JsonRpcErrorObject, JsonRpcId, JsonRpcResponse } from '../jsonrpc/envelope.ts';

// What the dispatcher answers with beyond a plain response: a result kept as JSON text until
// something reads it, and a streaming call's items as response events.

/** One event of a streamed answer. */
export interface StreamEvent {
  seq: number;
  response: JsonRpcResponse;
  /**
   * `response.result` as JSON text, when the item came serialised and the method's encoding leaves
   * it as it is: a transport splices it into its frame instead of serialising the result again.
   */
  resultJson?: string;
}

/**
 * A response whose result is parsed from its text only when something reads it (a transport that
 * splices `resultJson` never does). Serialises as the plain response would.
 */
export class TextResponse {
  readonly jsonrpc = '2.0';

  readonly id: JsonRpcId;
  private readonly text: JsonText<unknown>;

  constructor(id: JsonRpcId, text: JsonText<unknown>) {
    this.id = id;
    this.text = text;
  }

  get result(): unknown {
    return this.text.value;
  }

  toJSON(): JsonRpcResponse {
    return { jsonrpc: '2.0', id: this.id, result: this.result };
  }
}

const DONE: IteratorResult<StreamEvent> = { done: true, value: undefined };

/** What a streaming method yields: a payload, maybe with its JSON text (see StreamItem). */
export interface StreamSourceItem {
  seq: number;
  payload: unknown;
  json?: string;
}

/**
 * One streaming call's items as JSON-RPC responses: each result encoded, a failure turned into one
 * last error event, the source closed when the caller stops or the request is aborted. Written by
 * hand: an async generator costs several promises per event, and streams carry thousands.
 */
export class ResponseStream implements AsyncIterableIterator<StreamEvent> {
  private seq = 0;
  private finished = false;
  private readonly onAbort = (): void => void this.close();

  private readonly id: JsonRpcId;
  private readonly source: AsyncIterator<StreamSourceItem>;
  private readonly signal: AbortSignal;
  /** Whether `encode` returns the payload itself, so that the payload's JSON is the result's. */
  private readonly keepsJson: boolean;
  private readonly encode: (payload: unknown) => unknown;
  private readonly failure: (err: unknown) => JsonRpcErrorObject;

  constructor(
    id: JsonRpcId,
    source: AsyncIterator<StreamSourceItem>,
    signal: AbortSignal,
    keepsJson: boolean,
    encode: (payload: unknown) => unknown,
    failure: (err: unknown) => JsonRpcErrorObject,
  ) {
    this.id = id;
    this.source = source;
    this.signal = signal;
    this.keepsJson = keepsJson;
    this.encode = encode;
    this.failure = failure;
    signal.addEventListener('abort', this.onAbort, { once: true });
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<StreamEvent> {
    return this;
  }

  async next(): Promise<IteratorResult<StreamEvent>> {
    if (this.finished || this.signal.aborted) {
      await this.close();
      return DONE;
    }
    try {
      const next = await this.source.next();
      if (next.done) {
        await this.close();
        return DONE;
      }
      const { seq, payload, json } = next.value;
      this.seq = seq;
      const value: StreamEvent = { seq, response: { jsonrpc: '2.0', id: this.id, result: this.encode(payload) } };
      if (this.keepsJson && json !== undefined) value.resultJson = json;
      return { done: false, value };
    } catch (err) {
      const error = this.failure(err);
      await this.close();
      return { done: false, value: { seq: this.seq, response: { jsonrpc: '2.0', id: this.id, error } } };
    }
  }

  async return(): Promise<IteratorResult<StreamEvent>> {
    await this.close();
    return DONE;
  }

  private async close(): Promise<void> {
    if (this.finished) return;
    this.finished = true;
    this.signal.removeEventListener('abort', this.onAbort);
    await this.source.return?.();
  }
}
