/** `plan status` and the run summary: the last command and its output's last lines. */
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import { lastCommandFields } from '../../../../../src/presentation/cli/render/command-output.render.ts';
import { renderFields } from '../../../../../src/presentation/cli/render/table.ts';
import { Ui } from '../../../../../src/presentation/cli/render/ui.ts';

const ui = (format: 'rich' | 'plain'): Ui =>
  new Ui(format, { stdout: new PassThrough(), stderr: new PassThrough(), stdin: new PassThrough(), env: {} }, true);

const PLAN = '01JPLAN0000000000000000000';
const status = (text: string, over: Record<string, unknown> = {}) => ({
  planId: PLAN,
  lastCommand: {
    toolCallId: 'T1',
    decisionId: 'D1',
    step: 2,
    tool: 'builtin/run-command',
    ok: false,
    summary: 'sh -c "echo out; echo err >&2; exit 3": exit 3',
    exitCode: 3,
    createdAt: '2026-01-01T00:00:01.000Z',
    output: { text, bytes: Buffer.byteLength(text), truncated: false, ...over },
  },
});

describe('the last command in plan status', () => {
  it('plain: the command, its output on one line, nothing more when all of it is shown', () => {
    const u = ui('plain');
    assert.equal(
      renderFields(lastCommandFields(status('out\nerr\n'), u), u.mode),
      'last command: step 2 builtin/run-command FAILED: sh -c "echo out; echo err >&2; exit 3": exit 3\noutput: out\\nerr\n',
    );
  });

  it('rich: the last lines under each other, without the terminal’s control sequences, then how to see all', () => {
    const u = ui('rich');
    const text = `${Array.from({ length: 30 }, (_, i) => `\u001b[32mline ${i + 1}\u001b[0m`).join('\n')}\n`;
    const shown = renderFields(lastCommandFields(status(text, { bytes: 5_000_000, truncated: true }), u), u.mode);
    assert.match(shown, /^ {2}output {8}line 11\n {16}line 12\n/m);
    assert.ok(!shown.includes('\u001b'), 'no escape character left');
    assert.match(
      shown,
      new RegExp(
        `line 30\\n {16}last 20 of 30 lines; 4\\.8 MiB in all, the middle cut when kept — all of it: agents plan explain D1 --plan ${PLAN} --output\\n$`,
      ),
    );
  });

  it('says a command wrote nothing, and shows nothing for a plan that ran no command', () => {
    const u = ui('plain');
    assert.match(renderFields(lastCommandFields(status(''), u), u.mode), /^output: \(none\)$/m);
    assert.deepEqual(lastCommandFields({ planId: PLAN }, u), []);
  });
});
