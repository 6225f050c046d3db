import type { ChatEvent } from './chat.ts';

/** What the chat webview sends to the extension. */
export type ViewMessage =
  | { type: 'ready' }
  | { type: 'send'; text: string }
  | { type: 'answer'; decision: 'approve' | 'reject'; guidance?: string }
  | { type: 'cancel' }
  | { type: 'newSession' }
  | { type: 'resumeSession' };

/** What the extension sends to the chat webview: chat events, in order, or the whole log on `ready`. */
export type HostMessage = { type: 'events'; events: ChatEvent[]; reset: boolean };

const MAX_TEXT = 100_000;

/**
 * A webview message checked before it is acted on: the webview runs model output, so its messages
 * are input like any other. Anything else is undefined (and ignored).
 */
export function parseViewMessage(raw: unknown): ViewMessage | undefined {
  if (!raw || typeof raw !== 'object') return undefined;
  const m = raw as Record<string, unknown>;
  switch (m['type']) {
    case 'ready':
    case 'cancel':
    case 'newSession':
    case 'resumeSession':
      return { type: m['type'] };
    case 'send':
      return typeof m['text'] === 'string' && m['text'].length <= MAX_TEXT
        ? { type: 'send', text: m['text'] }
        : undefined;
    case 'answer': {
      const decision = m['decision'];
      if (decision !== 'approve' && decision !== 'reject') return undefined;
      const g = m['guidance'];
      if (g !== undefined && (typeof g !== 'string' || g.length > MAX_TEXT)) return undefined;
      return { type: 'answer', decision, ...(typeof g === 'string' && g.trim() ? { guidance: g } : {}) };
    }
    default:
      return undefined;
  }
}

/** How many chat events the view keeps to redraw itself (a webview reloads when it is moved). */
export const VIEW_LOG_LIMIT = 5000;
