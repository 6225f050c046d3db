import type { SessionUpdate } from '@agentclientprotocol/sdk';
import type { Task } from '../../protocol/client/index.ts';
import { compactionLine, compactionOf } from '../cli/render/compaction.render.ts';
import { messageWords } from '../cli/render/task.render.ts';
import { TurnTranslator } from './translate.ts';

/**
 * One stored turn as `session/load` replays it: what the user wrote, then the answer and the tool
 * calls as they ended. A compaction is no exchange: it is shown as a thought saying what it summarised.
 */
export function replayTurn(task: Task, root: string | undefined): SessionUpdate[] {
  const compaction = compactionOf(task);
  if (compaction)
    return [
      { sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: `${compactionLine(compaction)}\n` } },
    ];
  const asked: SessionUpdate[] = (task.history ?? [])
    .filter((m) => m.role === 'ROLE_USER')
    .map((m) => messageWords(m))
    .filter((text): text is string => text !== undefined)
    .map((text) => ({ sessionUpdate: 'user_message_chunk', content: { type: 'text', text } }));
  return [...asked, ...new TurnTranslator(root).push({ task })];
}
