import { randomUUID } from 'node:crypto';
import type { Message } from '../../../protocol/client/index.ts';

/** A fresh user message in A2A v1.0 form. */
export function userMessage(
  text: string,
  ids: { contextId?: string | undefined; taskId?: string | undefined } = {},
): Message {
  return {
    messageId: randomUUID(),
    role: 'ROLE_USER',
    parts: [{ text }],
    ...(ids.contextId ? { contextId: ids.contextId } : {}),
    ...(ids.taskId ? { taskId: ids.taskId } : {}),
  };
}
