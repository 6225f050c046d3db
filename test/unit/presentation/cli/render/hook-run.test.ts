import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hookArtifact } from '../../../../../src/application/hooks/hook.service.ts';
import { artifactsText, hookRunLine, hookRunOf } from '../../../../../src/presentation/cli/render/task.render.ts';

describe('hook runs in the CLI', () => {
  const artifact = hookArtifact({
    hook: 'local/guard',
    event: 'before-tool-call',
    tool: 'builtin/write-file',
    decision: 'deny',
    reason: 'not on Fridays',
    exitCode: 1,
    output: 'not on Fridays\n',
    truncated: false,
    durationMs: 12,
  });

  it('are one line each: the hook, the event, the tool, the decision and why', () => {
    const run = hookRunOf(artifact);
    assert.ok(run);
    assert.equal(
      hookRunLine(run),
      'hook local/guard before-tool-call builtin/write-file: deny (12 ms): not on Fridays',
    );
    assert.equal(hookRunLine({ hook: 'local/p', event: 'plan-phase', decision: 'ok' }), 'hook local/p plan-phase: ok');
  });

  it('are never part of the answer', () => {
    const answer = { artifactId: 'response', name: 'response', parts: [{ text: 'Done.' }] };
    assert.equal(artifactsText([artifact, answer]), 'Done.');
    assert.equal(hookRunOf(answer), undefined);
  });
});
