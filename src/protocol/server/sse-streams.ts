import type { ServerResponse } from 'node:http';
import type { Logger } from '../../application/index.ts';
import { resultText, type JsonRpcResponse } from '../jsonrpc/envelope.ts';
import { newCorrelationId, toErrorObject } from '../jsonrpc/jsonrpc.errors.ts';
import type { StreamEvent } from './dispatch-responses.ts';
import { writable } from './http-body.ts';
import { noteAnswer } from './http-response.ts';

/** The server's open SSE streams: each stream's events written as they come, and one heartbeat for all. */
export class SseStreams {
  private readonly streams = new Set<ServerResponse>();
  /** One timer pings every open stream (a timer per stream cost memory with thousands open). */
  private heartbeat: NodeJS.Timeout | undefined;

  private readonly heartbeatMs: number;
  private readonly logger: Logger;
  private readonly closing: () => boolean;

  constructor(heartbeatMs: number, logger: Logger, closing: () => boolean) {
    this.heartbeatMs = heartbeatMs;
    this.logger = logger;
    this.closing = closing;
  }

  /** Writes the events until they end, the client goes or the server closes; then ends the response. */
  async send(
    res: ServerResponse,
    events: AsyncIterable<StreamEvent> | Iterable<StreamEvent>,
    signal: AbortSignal,
  ): Promise<void> {
    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    res.flushHeaders();
    this.streams.add(res);
    this.heartbeat ??= setInterval(() => this.ping(), this.heartbeatMs).unref();
    try {
      for await (const ev of events) {
        if (signal.aborted || this.closing() || !writable(res)) break;
        let data: string;
        try {
          data = ev.resultJson === undefined ? JSON.stringify(ev.response) : resultText(ev.response.id, ev.resultJson);
        } catch (err) {
          // An event that cannot be serialised ends the stream with an error the client can read.
          const correlationId = newCorrelationId();
          this.logger.error({ err, correlationId }, 'stream event could not be sent');
          const failed: JsonRpcResponse = {
            jsonrpc: '2.0',
            id: ev.response.id,
            error: toErrorObject(err, 'extension', correlationId),
          };
          noteAnswer(res, failed);
          res.write(`id: ${ev.seq}\ndata: ${JSON.stringify(failed)}\n\n`);
          break;
        }
        if ('error' in ev.response) noteAnswer(res, ev.response);
        res.write(`id: ${ev.seq}\ndata: ${data}\n\n`);
      }
    } finally {
      this.streams.delete(res);
      if (this.streams.size === 0 && this.heartbeat) {
        clearInterval(this.heartbeat);
        this.heartbeat = undefined;
      }
      res.end();
    }
  }

  get size(): number {
    return this.streams.size;
  }

  /** Ends every open stream (the server is closing). */
  endAll(): void {
    for (const res of this.streams) res.end();
  }

  private ping(): void {
    for (const res of this.streams) if (writable(res)) res.write(': ping\n\n');
  }
}
