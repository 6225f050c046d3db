/** What a running app does besides answering requests: rediscovering OIDC, settling stranded work, stopping. */
import { settleStrandedWork, type Logger } from '../application/index.ts';
import type { LeasedRunnerRegistry } from '../infrastructure/index.ts';
import type { AgentCardProvider } from '../protocol/a2a/agent-card.ts';
import type { Services } from './composition/index.ts';
import { cardOidc, tryDiscovery, type OidcOptions } from './oidc-wiring.ts';

/** The status message of a turn still running when a graceful stop's deadline passed. */
const SHUTDOWN_TEXT =
  'Interrupted: the server shut down before this task finished; send the message again (with a new messageId) to retry';

/** Retries OIDC discovery until the issuer answers, then puts its device endpoints on the card. */
export class DiscoveryRetry {
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private readonly oidc: OidcOptions;
  private readonly card: AgentCardProvider;
  private readonly logger: Logger;

  constructor(oidc: OidcOptions, card: AgentCardProvider, logger: Logger) {
    this.oidc = oidc;
    this.card = card;
    this.logger = logger;
    this.schedule();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.attempt(), this.oidc.discoveryRetryMs ?? 30_000);
    this.timer.unref();
  }

  private async attempt(): Promise<void> {
    const d = await tryDiscovery(this.oidc, this.logger);
    if (this.stopped) return;
    if (!d) return this.schedule();
    this.card.setOidc(cardOidc(this.oidc, d));
    this.logger.info({ issuer: this.oidc.issuer }, 'OIDC discovery succeeded');
  }
}

/**
 * What a stopped process left running is settled (before serving, then every fifth of the lease), push
 * deliveries it left pending are resumed, and dead runners pruned; a graceful stop drains the
 * turns running here and settles them.
 */
export class Upkeep {
  private readonly sweeper: NodeJS.Timeout;
  private drained: Promise<void> | undefined;
  private readonly services: Services;
  private readonly runners: LeasedRunnerRegistry;
  private readonly logger: Logger;

  private constructor(services: Services, runners: LeasedRunnerRegistry, logger: Logger, periodMs: number) {
    this.services = services;
    this.runners = runners;
    this.logger = logger;
    this.sweeper = setInterval(() => {
      void this.sweep().catch((err: unknown) => logger.warn({ err }, 'settling stranded work failed'));
    }, periodMs);
    this.sweeper.unref();
  }

  /** Settles what a stopped process left before anything is served, then sweeps every `periodMs`. */
  static async start(
    services: Services,
    runners: LeasedRunnerRegistry,
    logger: Logger,
    periodMs: number,
  ): Promise<Upkeep> {
    await settleStrandedWork(strandedOf(services, runners, logger));
    // Push deliveries a stopped process left pending (ours are delivered by us from now on).
    await services.facade.notifier.resume((id) => runners.isLive(id));
    await runners.prune();
    return new Upkeep(services, runners, logger, periodMs);
  }

  /**
   * A graceful stop's first step: running turns may finish for up to `deadlineMs`, then those
   * left end FAILED ("the server shut down").
   */
  drain(deadlineMs: number): Promise<void> {
    return (this.drained ??= (async () => {
      clearInterval(this.sweeper);
      await this.services.turns.drain(deadlineMs, SHUTDOWN_TEXT);
      await this.services.turns.settleLost();
      const stranded = strandedOf(this.services, this.runners, this.logger);
      await settleStrandedWork(stranded, { text: SHUTDOWN_TEXT, treatSelfAsGone: true });
    })().catch((err: unknown) => this.logger.error({ err }, 'settling running work at shutdown failed')));
  }

  private async sweep(): Promise<void> {
    // Turns here that storage lost (a database outage) end first, now that it may answer again.
    await this.services.turns.settleLost();
    await settleStrandedWork(strandedOf(this.services, this.runners, this.logger));
    await this.services.facade.notifier.resume((id) => this.runners.isLive(id));
    await this.runners.prune();
  }
}

function strandedOf(
  services: Services,
  runners: LeasedRunnerRegistry,
  logger: Logger,
): Parameters<typeof settleStrandedWork>[0] {
  return { tasks: services.stranded, plans: services.facade.plans, runners, logger };
}
