import { Text } from 'ink';
import { createContext, useContext, type ReactNode } from 'react';
import type { Line, Tone } from './lines.ts';

/** Whether the TUI may colour (off under NO_COLOR and --no-color: then no escape code but ink's own cursor moves). */
export const ColorContext = createContext(true);

const TONES: Record<Tone, { color?: string; bold?: boolean; dimColor?: boolean }> = {
  user: { color: 'cyan', bold: true },
  agent: {},
  tool: { color: 'blue' },
  meta: { dimColor: true },
  warn: { color: 'yellow' },
  error: { color: 'red' },
  ok: { color: 'green' },
  add: { color: 'green' },
  del: { color: 'red' },
  hunk: { color: 'cyan' },
  head: { bold: true },
};

/** Text in a tone: coloured, or plain when colour is off. */
export function Toned({ tone, children }: { tone?: Tone | undefined; children: ReactNode }): ReactNode {
  const color = useContext(ColorContext);
  const style = color && tone ? TONES[tone] : {};
  return (
    <Text wrap="truncate-end" {...style}>
      {children}
    </Text>
  );
}

/** Lines one under the other. */
export function Lines({ lines }: { lines: readonly Line[] }): ReactNode {
  return (
    <>
      {lines.map((l, i) => (
        <Toned key={i} tone={l.tone}>
          {l.text || ' '}
        </Toned>
      ))}
    </>
  );
}
