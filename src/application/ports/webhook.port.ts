/**
 * Delivers one push notification over HTTP; throws when the receiver did not accept it. An error
 * with `permanent: true` (a refused target) is not retried.
 */
export interface WebhookSender {
  send(url: string, headers: Record<string, string>, body: string, signal: AbortSignal): Promise<void>;
}
