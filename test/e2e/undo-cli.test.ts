/**
 * End to end: `agents session undo`, `session show` and `/undo` in `agents chat`, through the built
 * CLI in local mode (each call spawns its agent over stdio). Until the agent loop checkpoints its
 * writes, the test plays the loop: the same data directory opened in this process, `before` and
 * `after` around the writes a turn makes.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { buildApp } from '../../src/main/app.ts';
import { agentsCli } from '../support/cli.ts';

const ROOT = fs.mkdtempSync(path.join(tmpdir(), 'agents-undo-e2e-'));
const DATA = path.join(ROOT, 'data');
const PROJECT = path.join(ROOT, 'project');
const cli = agentsCli({ dataDir: DATA, configHome: path.join(ROOT, 'config'), timeoutMs: 60_000 });

const write = (rel: string, content: string | Buffer): void => {
  fs.mkdirSync(path.dirname(path.join(PROJECT, rel)), { recursive: true });
  fs.writeFileSync(path.join(PROJECT, rel), content);
};

/** Plays the agent loop for turn `task`: a checkpoint, the writes, the files it changed. */
async function checkpointed(session: string, task: string, writes: () => void): Promise<string[]> {
  const app = await buildApp({ dataDir: DATA, card: { endpoint: 'memory://', auth: 'none' } });
  try {
    const ref = { session, task, root: PROJECT };
    await app.facade.turnHistory.before(ref);
    writes();
    return await app.facade.turnHistory.after(ref);
  } finally {
    await app.close();
  }
}

describe('agents session undo and /undo (e2e)', () => {
  after(() => fs.rmSync(ROOT, { recursive: true, force: true }));

  it('lists the changes, refuses a file changed since, undoes with --force, then /undo in chat', async () => {
    fs.mkdirSync(PROJECT);
    const binary = Buffer.from([0, 159, 146, 150, 13, 10]);
    write('a.txt', 'original\n');
    write('b.bin', binary);
    const session = (await cli.ok(['session', 'create'])).session.id as string;
    await cli.ok(['send', '--session', session, 'first']);
    await cli.ok(['send', '--session', session, 'second']);
    const tasks = (await cli.ok(['session', 'show', session])).tasks as { id: string }[];
    assert.equal(tasks.length, 2);
    assert.deepEqual(
      await checkpointed(session, tasks[0]!.id, () => {
        write('a.txt', 'turn one\n');
        write('made/new.txt', 'new\n');
      }),
      ['a.txt', 'made/new.txt'],
    );
    await checkpointed(session, tasks[1]!.id, () => fs.rmSync(path.join(PROJECT, 'b.bin')));

    const shown = await cli.run(['--format', 'plain', 'session', 'show', session]);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, new RegExp(`^change\\t1\\t${tasks[0]!.id}\\ta\\.txt\\tkept$`, 'm'));
    assert.match(shown.stdout, new RegExp(`^change\\t2\\t${tasks[1]!.id}\\tb\\.bin\\tkept$`, 'm'));

    // The user recreates the file the second turn deleted: undo refuses, naming it.
    write('b.bin', 'the user put something else here\n');
    const refused = await cli.run(['session', 'undo', session]);
    assert.equal(refused.code, 5, refused.stderr);
    assert.match(refused.stderr, /changed outside the agent since turn 2: b\.bin/);
    assert.match(refused.stderr, /--force/);
    assert.equal(fs.readFileSync(path.join(PROJECT, 'b.bin'), 'utf8'), 'the user put something else here\n');

    const forced = await cli.ok(['session', 'undo', session, '--force']);
    assert.deepEqual(forced.files, ['b.bin']);
    assert.deepEqual(forced.overwritten, ['b.bin']);
    assert.deepEqual(fs.readFileSync(path.join(PROJECT, 'b.bin')), binary);

    const chat = await cli.run(['--format', 'plain', 'chat', '--session', session], { input: '/undo\n' });
    assert.equal(chat.code, 0, chat.stderr);
    assert.match(chat.stdout, new RegExp(`^undone\\t1\\t${tasks[0]!.id}\\t2$`, 'm'));
    assert.match(chat.stdout, /^restored\tmade\/new\.txt$/m);
    assert.equal(fs.readFileSync(path.join(PROJECT, 'a.txt'), 'utf8'), 'original\n');
    assert.equal(fs.existsSync(path.join(PROJECT, 'made')), false);
    assert.deepEqual(fs.readdirSync(PROJECT).sort(), ['a.txt', 'b.bin']);

    const again = await cli.run(['chat', '--session', session], { input: '/undo\n' });
    assert.match(again.stderr, /no turn left to undo/);
    const listed = await cli.ok(['session', 'show', session]);
    assert.deepEqual(
      (listed.changes as { turn: number; undone: boolean }[]).map((c) => [c.turn, c.undone]),
      [
        [1, true],
        [2, true],
      ],
    );
  });
});
