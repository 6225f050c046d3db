import { stringify } from 'yaml';
import type { OutputFormat } from './format.ts';

export type MessageLevel = 'info' | 'warn' | 'error' | 'hint';

export interface EnvelopeMessage {
  level: MessageLevel;
  text: string;
}

/** The one object a command prints in json/yaml mode. */
export interface Envelope {
  command: string;
  status: 'ok' | 'error';
  exitCode: number;
  data: unknown;
  timing: { startedAt: string; durationMs: number };
  messages: EnvelopeMessage[];
}

export function buildEnvelope(
  command: string,
  exitCode: number,
  data: unknown,
  startedAt: Date,
  durationMs: number,
  messages: EnvelopeMessage[],
): Envelope {
  return {
    command,
    status: exitCode === 0 ? 'ok' : 'error',
    exitCode,
    data: data ?? null,
    timing: { startedAt: startedAt.toISOString(), durationMs: Math.round(durationMs) },
    messages,
  };
}

export function serializeEnvelope(env: Envelope, format: Extract<OutputFormat, 'json' | 'yaml'>): string {
  return format === 'json' ? `${JSON.stringify(env, null, 2)}\n` : stringify(env, { lineWidth: 0 });
}
