import { Box } from 'ink';
import type { ReactNode } from 'react';
import { approvalWhat } from '../../protocol/client/index.ts';
import { diffLines, turnLines, wrap, type Line } from './lines.ts';
import type { PendingApproval, TuiState } from './state.ts';
import { Lines } from './theme.tsx';

/** The approval the turn stopped for: the tool, its preview, the keys. */
export function approvalLines(a: PendingApproval, width: number): Line[] {
  const args = a.request.args ? JSON.stringify(a.request.args) : '';
  return [
    ...wrap(`Approval needed: ${approvalWhat(a.request)} — ${a.question}`, width, 'warn'),
    ...(args ? wrap(`  arguments: ${args}`, width, 'meta') : []),
    ...(a.request.preview ? diffLines(a.request.preview, width).slice(0, 15) : []),
    ...wrap('[y] approve · [n] reject · [g] reject with guidance · Esc: answer in words', width, 'warn'),
  ];
}

/** The session's turns, the newest at the bottom (older ones scroll off the top), then a waiting approval. */
export function ChatPane({ state, height, width }: { state: TuiState; height: number; width: number }): ReactNode {
  const lines = state.turns.flatMap((t) => turnLines(t, width));
  if (state.turns.length === 0)
    lines.push({ text: 'type a message and press Enter; /help for commands', tone: 'meta' });
  const prompt = state.approval ? approvalLines(state.approval, width) : [];
  const room = Math.max(0, height - prompt.length);
  return (
    <Box flexDirection="column" height={height}>
      <Lines lines={[...lines.slice(Math.max(0, lines.length - room)), ...prompt].slice(-height)} />
    </Box>
  );
}
