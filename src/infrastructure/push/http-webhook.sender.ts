import type { WebhookSender } from '../../application/index.ts';
import { egressRefusalOf, type EgressGuard } from '../net/egress-guard.ts';

export interface HttpWebhookSenderOptions {
  /**
   * The egress guard every delivery goes through: the target is checked before the request, and
   * again by the guard's connector when it connects (no DNS rebinding in between).
   */
  guard: EgressGuard;
}

/**
 * Delivers push notifications: one POST, success only on 2xx, redirects refused (a receiver that
 * redirects is answering something else). A refused target throws the guard's EgressRefusedError,
 * which is permanent: the notifier does not retry it.
 */
export class HttpWebhookSender implements WebhookSender {
  private readonly guard: EgressGuard;

  constructor(opts: HttpWebhookSenderOptions) {
    this.guard = opts.guard;
  }

  async send(url: string, headers: Record<string, string>, body: string, signal: AbortSignal): Promise<void> {
    const target = await this.guard.check(url);
    let res: Response;
    try {
      res = await this.guard.fetch(target, { method: 'POST', headers, body, signal, redirect: 'manual' });
    } catch (err) {
      // Refused at connect time (the name resolves to an internal address now): not retried.
      throw egressRefusalOf(err) ?? err;
    }
    // Release the connection; the receiver's answer carries nothing we use.
    await res.body?.cancel().catch(() => {});
    if (res.status < 200 || res.status > 299) {
      const what = res.status >= 300 && res.status < 400 ? 'redirected (redirects are not followed)' : 'answered';
      throw new Error(`webhook ${target.origin} ${what} with HTTP ${res.status}`);
    }
  }
}
