/** The TUI's plan view: the selected step's command output (its last lines), else the plan's last command's. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { planLines } from '../../src/presentation/tui/lines.ts';
import { logOf } from '../../src/presentation/tui/plan-controller.ts';
import type { Decision, PlanPane, PlanStatus } from '../../src/presentation/tui/state.ts';
import type { Task } from '../../src/protocol/client/index.ts';

const PLAN = '01JPLAN0000000000000000000';
const status = {
  planId: PLAN,
  phase: 'execute',
  state: 'errored',
  running: false,
  action: 'builtin/run-command',
  projects: ['local/p'],
  progress: { stepsDone: 1, stepsTotal: 2 },
  attempt: 1,
  allowed: ['execute'],
  checkpoints: [],
  lastCommand: {
    toolCallId: 'T2',
    decisionId: 'D2',
    step: 2,
    tool: 'builtin/run-command',
    ok: false,
    summary: 'npm test: exit 3',
    exitCode: 3,
    createdAt: '2026-01-01T00:00:01.000Z',
    output: { text: 'whole\noutput\nFAIL\n', bytes: 18, truncated: false },
  },
} as unknown as PlanStatus;

const step = (id: string, stepIndex: number, tool: string): Decision =>
  ({
    id,
    type: 'step',
    question: `Step ${stepIndex + 1}`,
    chosen: { tool, args: {} },
    stepIndex,
    children: [],
  }) as unknown as Decision;

const task = {
  id: 'T',
  contextId: 'C',
  status: { state: 'TASK_STATE_FAILED' },
  artifacts: [
    {
      artifactId: 'execution-log',
      parts: [
        { data: { tool: 'builtin/write-file', decisionId: 'D1', ok: true, summary: 'wrote a', filesTouched: ['a'] } },
        {
          data: {
            tool: 'builtin/run-command',
            decisionId: 'D2',
            ok: false,
            summary: 'npm test: exit 3',
            filesTouched: [],
            outputTail: 'output\nFAIL',
          },
        },
      ],
    },
  ],
} as unknown as Task;

const pane = (selected: number): PlanPane => ({
  status,
  decisions: [step('D1', 0, 'builtin/write-file'), step('D2', 1, 'builtin/run-command')],
  log: logOf(task),
  showDiff: false,
  scroll: 0,
  selected,
});

const text = (p: PlanPane): string =>
  planLines(p, 200)
    .map((l) => l.text)
    .join('\n');

describe('tui plan view: a command’s output', () => {
  it('shows the selected step’s last lines from the execution log, and how to see all', () => {
    assert.match(
      text(pane(1)),
      new RegExp(
        `Output of the selected step 2\\n {2}output\\n {2}FAIL\\n {2}all of it: agents plan explain D2 --plan ${PLAN} --output\\n`,
      ),
    );
  });

  it('shows the plan’s last command when the selected step ran none', () => {
    assert.match(text(pane(0)), /Output of the last command \(step 2\)\n {2}whole\n {2}output\n {2}FAIL\n/);
  });
});
