import { hash } from 'node:crypto';
import type { Message } from '../../domain/a2a.model.ts';

/**
 * The content of a sent message that its messageId stands for: a retry must carry the same parts,
 * metadata, context and task (and references/extensions), or it is a different message that
 * reuses the id. Keys are sorted so that key order on the wire does not matter.
 */
export function messageFingerprint(m: Message): string {
  const content = {
    parts: m.parts,
    metadata: m.metadata ?? null,
    contextId: m.contextId ?? null,
    taskId: m.taskId ?? null,
    referenceTaskIds: m.referenceTaskIds ?? null,
    extensions: m.extensions ?? null,
  };
  // One-shot: no Hash object per send (the same digest as createHash's).
  return hash('sha256', canonicalJson(content), 'base64url');
}

/** JSON with object keys sorted at every level (undefined members dropped, as JSON.stringify does). */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
    const sorted: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) sorted[k] = (v as Record<string, unknown>)[k];
    return sorted;
  });
}
