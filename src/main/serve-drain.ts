/** Server mode's graceful stop: what happens between SIGTERM (or SIGINT) and the process's exit. */
import { setTimeout as delay } from 'node:timers/promises';
import type { Logger } from '../application/index.ts';
import type { A2aHttpServer } from '../protocol/server/http.server.ts';
import type { App } from './app.ts';

/**
 * How long the server keeps serving after the signal, with /ready answering 503, before it stops
 * accepting. 5 s covers a Kubernetes endpoint removal reaching kube-proxy and ingresses (a few
 * seconds) and a balancer that probes /ready every 2 s and acts on the second failure; one that
 * probes more slowly needs more (`--drain-window-ms`). Short enough that a person pressing Ctrl-C
 * waits little, and a second signal skips it.
 */
export const DEFAULT_DRAIN_WINDOW_MS = 5_000;
/** How long running turns may finish once the server stops accepting (README: 4000). */
export const DEFAULT_DRAIN_DEADLINE_MS = 4_000;
/** After the turns: time for the last answers and stream events to be written before sockets are cut. */
const LAST_WRITES_MS = 1_000;

export interface DrainSettings {
  /** Serving on, /ready 503, before accepting stops. */
  windowMs: number;
  /** Running turns' time to finish once accepting stopped; those left then end FAILED. */
  deadlineMs: number;
}

/** The stop signals: the first starts the graceful stop, a second one cuts its window short. */
export interface StopSignals {
  first: Promise<string>;
  second: Promise<string>;
}

export function stopSignals(): StopSignals {
  let seen = 0;
  let first!: (signal: string) => void;
  let second!: (signal: string) => void;
  const signals: StopSignals = {
    first: new Promise((resolve) => (first = resolve)),
    second: new Promise((resolve) => (second = resolve)),
  };
  const on = (signal: string): void => (++seen === 1 ? first : second)(signal);
  process.on('SIGTERM', () => on('SIGTERM'));
  process.on('SIGINT', () => on('SIGINT'));
  return signals;
}

/**
 * The graceful stop, in order: /ready turns 503 and everything is served on for the window (a
 * balancer moves new clients elsewhere); then no new connections, while running turns finish
 * until the deadline (their blocked senders get the answer; those left end FAILED); then every
 * open stream gets a last event saying why it ends, and the connections close.
 */
export async function drainAndStop(
  server: A2aHttpServer,
  app: App,
  settings: DrainSettings,
  signals: StopSignals,
  logger: Logger,
): Promise<void> {
  const signal = await signals.first;
  server.beginDrain();
  if (settings.windowMs > 0) {
    logger.info(
      { signal, drainWindowMs: settings.windowMs },
      `shutting down: /ready answers 503; serving on for ${settings.windowMs} ms (a second signal skips this)`,
    );
    const window = new AbortController();
    const skipped = signals.second.then((again) => {
      if (!window.signal.aborted) logger.info({ signal: again }, 'second signal: the drain window is cut short');
    });
    await Promise.race([delay(settings.windowMs, undefined, { signal: window.signal }).catch(() => {}), skipped]);
    window.abort();
  } else {
    logger.info({ signal }, 'shutting down');
  }
  logger.info(
    { drainDeadlineMs: settings.deadlineMs },
    `no longer accepting connections; running turns may finish for ${settings.deadlineMs} ms`,
  );
  void server.stopAccepting();
  await app.drain(settings.deadlineMs);
  await server.close(LAST_WRITES_MS);
  await app.close();
  logger.info({}, 'stopped');
}
