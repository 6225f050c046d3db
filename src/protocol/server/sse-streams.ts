import type { ServerResponse } from 'node:http';
import type { Logger } from '../../application/index.ts';
import { AppError } from '../../domain/errors.ts';
import { subscribeToTask } from '../a2a/contracts/task.contract.ts';
import type { ProtocolVersion } from '../a2a/versions.ts';
import { resultText, type JsonRpcId, type JsonRpcResponse } from '../jsonrpc/envelope.ts';
import { toErrorObject } from '../jsonrpc/jsonrpc.errors.ts';
import type { StreamEvent } from './dispatch-responses.ts';
import { writable } from './http-body.ts';
import { noteAnswer } from './http-response.ts';
import { correlationIdNow } from './request-origin.ts';

/**
 * The last event of a stream the server ends before its events did (it is shutting down): why,
 * and what to call to follow on. Made when the stream ends, so it carries that moment's words.
 */
export type Farewell = () => JsonRpcResponse;

/**
 * The last event of a task's stream the server ends while it shuts down: UNAVAILABLE, naming the
 * method that follows the task on (another instance, or this one once it is back). The stream's
 * own dialect: its A2A version's method name and error format.
 */
export function shutdownFarewell(
  id: JsonRpcId,
  version: ProtocolVersion | undefined,
  correlationId: string,
): JsonRpcResponse {
  const v03 = version !== '1.0';
  const method = v03 ? (subscribeToTask.v03?.name ?? subscribeToTask.name) : subscribeToTask.name;
  const err = new AppError(
    'UNAVAILABLE',
    `the server is shutting down; resubscribe with ${method} to follow the task`,
    {
      details: { shuttingDown: true },
      hint: `call ${method} with the task's id (behind a balancer another instance answers; else once the server is back); the task's events are kept`,
    },
  );
  return { jsonrpc: '2.0', id, error: toErrorObject(err, v03 ? 'a2a-v03' : 'a2a-v1', correlationId) };
}

/** The server's open SSE streams: each stream's events written as they come, and one heartbeat for all. */
export class SseStreams {
  /** Each open stream, with the last event it gets if the server ends it. */
  private readonly streams = new Map<ServerResponse, Farewell | undefined>();
  /** One timer pings every open stream (a timer per stream cost memory with thousands open). */
  private heartbeat: NodeJS.Timeout | undefined;

  private readonly heartbeatMs: number;
  private readonly logger: Logger;
  constructor(heartbeatMs: number, logger: Logger) {
    this.heartbeatMs = heartbeatMs;
    this.logger = logger;
  }

  /** Writes the events until they end, the client goes or the server closes; then ends the response. */
  async send(
    res: ServerResponse,
    events: AsyncIterable<StreamEvent> | Iterable<StreamEvent>,
    signal: AbortSignal,
    farewell?: Farewell,
  ): Promise<void> {
    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    res.flushHeaders();
    this.streams.set(res, farewell);
    this.heartbeat ??= setInterval(() => this.ping(), this.heartbeatMs).unref();
    try {
      for await (const ev of events) {
        if (signal.aborted || !writable(res)) break;
        let data: string;
        try {
          data = ev.resultJson === undefined ? JSON.stringify(ev.response) : resultText(ev.response.id, ev.resultJson);
        } catch (err) {
          // An event that cannot be serialised ends the stream with an error the client can read.
          const correlationId = correlationIdNow();
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

  /**
   * Ends every open stream (the server is closing), each with its farewell event first: a client
   * then knows the stream did not end because its task did, and what to call to follow on.
   */
  endAll(): void {
    for (const [res, farewell] of this.streams) {
      if (farewell && writable(res)) {
        const last = farewell();
        noteAnswer(res, last);
        res.write(`data: ${JSON.stringify(last)}\n\n`);
      }
      res.end();
    }
  }

  /** How many streams are open. */
  get size(): number {
    return this.streams.size;
  }

  private ping(): void {
    for (const res of this.streams.keys()) if (writable(res)) res.write(': ping\n\n');
  }
}
