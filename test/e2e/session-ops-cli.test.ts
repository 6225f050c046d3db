/**
 * End to end: `agents session update`, `session diff` and `session context` through the built CLI
 * in local mode (each call spawns its agent over stdio). As undo-cli.test.ts does, the test plays
 * the agent loop's checkpoints around a turn's writes, in this process on the same data directory.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { buildApp } from '../../src/main/app.ts';
import { agentsCli } from '../support/cli.ts';

const ROOT = fs.mkdtempSync(path.join(tmpdir(), 'agents-session-ops-e2e-'));
const DATA = path.join(ROOT, 'data');
const PROJECT = path.join(ROOT, 'project');
const cli = agentsCli({ dataDir: DATA, configHome: path.join(ROOT, 'config'), timeoutMs: 60_000 });

async function checkpointed(session: string, task: string, writes: () => void): Promise<void> {
  const app = await buildApp({ dataDir: DATA, card: { endpoint: 'memory://', auth: 'none' } });
  try {
    const ref = { session, task, root: PROJECT };
    await app.facade.turnHistory.before(ref);
    writes();
    await app.facade.turnHistory.after(ref);
  } finally {
    await app.close();
  }
}

describe('agents session update, diff and context (e2e)', () => {
  after(() => fs.rmSync(ROOT, { recursive: true, force: true }));

  it("switches the actor, shows the turns' diff with an outside change marked, and previews the next turn", async () => {
    fs.mkdirSync(PROJECT);
    fs.writeFileSync(path.join(PROJECT, 'a.txt'), 'one\n');
    const session = (await cli.ok(['session', 'create'])).session.id as string;
    await cli.ok(['send', '--session', session, 'first']);
    const task = ((await cli.ok(['session', 'show', session])).tasks as { id: string }[])[0]!.id;
    await checkpointed(session, task, () => {
      fs.writeFileSync(path.join(PROJECT, 'a.txt'), 'two\n');
      fs.writeFileSync(path.join(PROJECT, 'b.txt'), 'made\n');
    });
    fs.writeFileSync(path.join(PROJECT, 'b.txt'), 'edited by hand\n');

    const diff = await cli.run(['--format', 'plain', 'session', 'diff', session]);
    assert.equal(diff.code, 0, diff.stderr);
    assert.equal(
      diff.stdout,
      [
        'diff --git a/a.txt b/a.txt',
        '--- a/a.txt',
        '+++ b/a.txt',
        '@@ -1 +1 @@',
        '-one',
        '+two',
        '# changed outside the agent since: b.txt',
        'diff --git a/b.txt b/b.txt',
        'new file mode 100644',
        '--- /dev/null',
        '+++ b/b.txt',
        '@@ -0,0 +1 @@',
        '+edited by hand',
        '',
      ].join('\n'),
    );

    const updated = await cli.ok(['session', 'update', session, '--actor', 'builtin/conformance']);
    assert.equal((updated.session as { actor: string }).actor, 'builtin/conformance');
    const unknown = await cli.run(['session', 'update', session, '--actor', 'nobody']);
    assert.equal(unknown.code, 3, unknown.stderr);
    assert.match(unknown.stderr, /No actor named local\/nobody/);
    assert.match(unknown.stderr, /available actors: builtin\/echo/);
    const nothing = await cli.run(['session', 'update', session]);
    assert.equal(nothing.code, 2, nothing.stderr);
    assert.match(nothing.stderr, /nothing to update/);

    const context = await cli.ok(['session', 'context', session]);
    assert.equal(context.actor, 'builtin/conformance');
    assert.equal(context.model, undefined);
    const rich = await cli.run(['--format', 'rich', 'session', 'context', session]);
    assert.match(rich.stdout, /builtin\/conformance is a built-in actor: its turns send nothing to a model/);
  });
});
