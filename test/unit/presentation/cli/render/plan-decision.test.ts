import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import { planCorrect, planExplain } from '../../../../../src/protocol/client/index.ts';
import { CliError } from '../../../../../src/presentation/cli/exit-codes.ts';
import {
  renderCorrection,
  renderExplain,
  wholeOutput,
} from '../../../../../src/presentation/cli/render/plan-decision.render.ts';
import { Ui } from '../../../../../src/presentation/cli/render/ui.ts';

const plainUi = (): Ui =>
  new Ui('plain', { stdout: new PassThrough(), stderr: new PassThrough(), stdin: new PassThrough(), env: {} }, true);

const PLAN = '01JPLAN0000000000000000000';
const decision = (id: string, over: Record<string, unknown> = {}): Record<string, unknown> => ({
  id,
  planId: PLAN,
  type: 'step',
  question: 'Step 1 of 1',
  chosen: { tool: 'builtin/write-file', args: { path: 'a.txt' } },
  alternatives: [],
  confidence: 1,
  rationale: 'declared by the action',
  context: {},
  superseded: false,
  attempt: 1,
  createdAt: '2026-01-01T00:00:00.000Z',
  ...over,
});

describe('plan explain and correct rendering', () => {
  it('--show-context lists the instruction files the decision saw, then its files', () => {
    const snapshot = {
      snapshot: 'sha256:0123456789abcdef',
      view: 'strategize',
      project: 'local/api',
      instructions: [{ resource: 'local/api', path: 'AGENTS.md', tokens: 12, why: 'root' }],
      files: [{ resource: 'local/api', path: 'src/date.js', tokens: 30, score: 3 }],
      tokens: 30,
      budget: 1000,
    };
    const r = planExplain.result.parse({
      planId: PLAN,
      decision: decision('D1', { type: 'choice', context: { snapshot } }),
      children: [],
      toolCalls: [],
    });
    const text = renderExplain(r, plainUi(), true);
    assert.match(text, /^context instruction: AGENTS\.md \(local\/api, 12 tokens, root\)$/m);
    assert.ok(text.indexOf('context instruction:') < text.indexOf('context file: src/date.js'), text);
    assert.doesNotMatch(renderExplain(r, plainUi(), false), /context instruction/);
  });

  it('renders an explained decision from its result schema: parent, children, tool calls, checkpoint, context', () => {
    // Parsed by the row's schema, so the fixture is what a client really gets.
    const r = planExplain.result.parse({
      planId: PLAN,
      decision: decision('D1', { parentId: 'D0', context: { file: 'a.txt' } }),
      parent: decision('D0', { type: 'strategy', question: 'How?' }),
      children: [decision('D2', { type: 'approval', question: 'Write a.txt?' })],
      toolCalls: [
        {
          id: 'T1',
          planId: PLAN,
          decisionId: 'D1',
          tool: 'builtin/write-file',
          args: { path: 'a.txt' },
          ok: true,
          summary: 'wrote a.txt',
          durationMs: 3,
          filesTouched: ['a.txt'],
          resource: 'local/api',
          createdAt: '2026-01-01T00:00:01.000Z',
        },
      ],
      checkpointAfter: {
        id: 'C1',
        planId: PLAN,
        label: 'after-step:1',
        commits: {},
        stepIndex: 1,
        createdAt: '2026-01-01T00:00:02.000Z',
      },
    });
    const text = renderExplain(r, plainUi());
    assert.match(text, /^decision: D1$/m);
    assert.match(text, new RegExp(`^plan: ${PLAN}$`, 'm'));
    assert.match(text, /^chosen: builtin\/write-file path=a\.txt$/m);
    assert.match(text, /^confidence: 1$/m);
    assert.match(text, /^superseded: false$/m);
    assert.match(text, /^parent: D0 How\?$/m);
    assert.match(text, /^child: D2 approval: Write a\.txt\?$/m);
    assert.match(text, /^tool call: builtin\/write-file ok: wrote a\.txt \(3 ms\) — a\.txt$/m);
    assert.match(text, /^checkpoint: C1 after-step:1$/m);
    assert.match(text, /^context:\n {2}file: a\.txt$/m);
    assert.doesNotMatch(text, /alternatives/);
  });

  it('shows a command call’s last lines and how to see all; --output prints all of it, or says there is none', () => {
    const lines = Array.from({ length: 25 }, (_, i) => `line ${i + 1}`);
    const call = (id: string, text: string) => ({
      id,
      planId: PLAN,
      decisionId: 'D1',
      tool: 'builtin/run-command',
      args: { command: 'npm test' },
      ok: false,
      summary: 'npm test: exit 3',
      durationMs: 9,
      filesTouched: [],
      exitCode: 3,
      resource: 'local/api',
      createdAt: '2026-01-01T00:00:01.000Z',
      output: { text, bytes: Buffer.byteLength(text), truncated: false },
    });
    const r = planExplain.result.parse({
      planId: PLAN,
      decision: decision('D1'),
      children: [],
      toolCalls: [call('T1', `${lines.join('\n')}\n`)],
    });
    const text = renderExplain(r, plainUi());
    assert.match(text, new RegExp(`^output: ${lines.slice(5).join('\\\\n')}$`, 'm'));
    assert.match(
      text,
      new RegExp(`^output more: last 20 of 25 lines — all of it: agents plan explain D1 --plan ${PLAN} --output$`, 'm'),
    );
    assert.equal(wholeOutput(r, plainUi()), `${lines.join('\n')}\n`);
    // An actor's decision with two commands: each under a line naming it.
    const two = planExplain.result.parse({ ...r, toolCalls: [call('T1', 'one'), call('T2', 'two\n')] });
    assert.equal(
      wholeOutput(two, plainUi()),
      '── builtin/run-command: npm test: exit 3\none\n── builtin/run-command: npm test: exit 3\ntwo\n',
    );
    const none = planExplain.result.parse({ ...r, toolCalls: [] });
    assert.throws(
      () => wholeOutput(none, plainUi()),
      (e: unknown) => e instanceof CliError && e.reason === 'NOT_FOUND' && /D1 kept no command output/.test(e.message),
    );
  });

  it('renders a dry-run correction as what would change, and a done one as what changed', () => {
    const ui = plainUi();
    const dry = renderCorrection(
      planCorrect.result.parse({
        planId: PLAN,
        mode: 'revert',
        dryRun: true,
        attempt: 1,
        wouldSupersede: ['D1', 'D2'],
        wouldRestoreCheckpoint: 'C0',
        wouldResumeAtStep: 0,
      }),
      ui,
    );
    assert.equal(
      dry,
      `plan: ${PLAN}\ndry-run: true\nmode: revert\nwould supersede: D1\nwould supersede: D2\nwould restore: C0\nwould resume at step: 0\n`,
    );
    const done = renderCorrection(
      planCorrect.result.parse({ planId: PLAN, mode: 'append', attempt: 2, superseded: [], added: ['D3'] }),
      ui,
    );
    assert.equal(done, `plan: ${PLAN}\nmode: append\nattempt: 2\nadded: D3\nnext: agents plan tree ${PLAN}\n`);
  });
});
