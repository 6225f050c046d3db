/**
 * NO_COLOR (and --no-color): the TUI's screens carry no escape code; with colour they do. Colour is
 * forced for ink here, so the test can tell the two apart on a pipe.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

process.env['FORCE_COLOR'] = '1';
const { render } = await import('ink-testing-library');
const { ChatPane } = await import('../../src/presentation/tui/ChatPane.tsx');
const { PlanView } = await import('../../src/presentation/tui/PlanView.tsx');
const { ColorContext } = await import('../../src/presentation/tui/theme.tsx');
const { initialState } = await import('../../src/presentation/tui/state.ts');

// eslint-disable-next-line no-control-regex -- escape codes begin with ESC.
const ESC = /\u001b\[/;

const state = {
  ...initialState(),
  view: 'chat' as const,
  turns: [
    {
      key: 't1',
      input: 'hi',
      task: {
        id: 'task-1',
        contextId: 'ctx-1',
        status: { state: 'TASK_STATE_COMPLETED' as const },
        artifacts: [
          {
            artifactId: 'call-1',
            name: 'tool-call',
            parts: [{ data: { tool: 'builtin/read-file', state: 'done', ok: true, summary: 'read a.txt' } }],
          },
          { artifactId: 'answer', parts: [{ text: 'Hello.' }] },
        ],
      },
    },
  ],
  plan: { ...initialState().plan, showDiff: true, diff: '--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n+new\n' },
};

function frameOf(color: boolean, view: 'chat' | 'plan'): string {
  const Pane = view === 'chat' ? ChatPane : PlanView;
  const app = render(
    <ColorContext.Provider value={color}>
      <Pane state={{ ...state, view }} height={12} width={60} />
    </ColorContext.Provider>,
  );
  const out = app.lastFrame() ?? '';
  app.unmount();
  return out;
}

describe('tui colour', () => {
  it('colours the chat and the diff when colour is on', () => {
    assert.match(frameOf(true, 'chat'), ESC);
    assert.match(frameOf(true, 'plan'), ESC);
  });

  it('writes no escape code under NO_COLOR, and the words still say what each line is', () => {
    const chat = frameOf(false, 'chat');
    assert.doesNotMatch(chat, ESC);
    assert.match(chat, /you › hi\n {2}✓ builtin\/read-file done: read a\.txt\nagent › Hello\./);
    const diff = frameOf(false, 'plan');
    assert.doesNotMatch(diff, ESC);
    assert.match(diff, /^-old\n\+new$/m);
  });
});
