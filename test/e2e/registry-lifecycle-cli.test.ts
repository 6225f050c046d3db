/**
 * End to end: every registry verb of every kind through the built `agents` CLI — add, list, show,
 * update (a changed definition gets the next revision; the same one is `unchanged`) and remove in
 * the order references allow — a real subprocess (and local agent) per call, no TTY.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { agentsCli } from '../support/cli.ts';
import { copyRegistryFixtures, REGISTRY_FIXTURES } from '../support/registry-fixtures.ts';
import { e2eRoot } from '../support/modes.ts';

const ROOT = e2eRoot('agents-registry-lifecycle');
const DEFS = join(ROOT, 'defs');
const DATA = join(ROOT, 'data');
const cli = agentsCli({ dataDir: DATA, configHome: join(ROOT, 'no-config'), cwd: ROOT });

/** Removal goes the other way. */
const KINDS = REGISTRY_FIXTURES;

describe('every registry kind: add, list, show, update, remove through the CLI', () => {
  before(() => copyRegistryFixtures(DEFS));

  it('walks each kind through its whole life', async () => {
    for (const k of KINDS) {
      const added = await cli.ok([k.kind, 'add', '--config', join(DEFS, k.file)]);
      assert.equal(added.name, k.name);
      assert.equal(added.revision, 1);
      const listed = await cli.ok([k.kind, 'list', '--namespace', 'local']);
      assert.deepEqual(
        listed.items.map((e: { name: string }) => e.name),
        [k.name],
        `${k.kind} list shows the one local ${k.kind}`,
      );
      assert.equal(listed.totalSize, 1);
    }
    for (const k of KINDS) {
      const same = await cli.ok([k.kind, 'update', k.name, '--config', join(DEFS, k.file)]);
      assert.equal(same.unchanged, true, `${k.kind} update with the same definition`);
      assert.equal(same.revision, 1);
      const edited = join(DEFS, `edited-${k.file}`);
      writeFileSync(
        edited,
        readFileSync(join(DEFS, k.file), 'utf8').replace(/^description: .*$/m, `description: edited ${k.kind}`),
      );
      const updated = await cli.ok([k.kind, 'update', k.name, '--config', edited, '--expected-revision', '1']);
      assert.equal(updated.unchanged, false);
      assert.equal(updated.revision, 2, `${k.kind} update gives revision 2`);
      const shown = await cli.ok([k.kind, 'show', k.name]);
      assert.equal(shown.definition.description, `edited ${k.kind}`);
      assert.equal(shown.revision, 2);
    }
    // A skill is still used by the actor: refused, nothing removed.
    await (
      await cli.json(['skill', 'remove', 'local/shell'], { code: 5 })
    ).data;
    assert.equal((await cli.ok(['skill', 'show', 'local/shell'])).revision, 2);
    for (const k of [...KINDS].reverse()) {
      const removed = await cli.ok([k.kind, 'remove', k.name]);
      assert.equal(removed.removed, true, `${k.kind} remove`);
      assert.deepEqual(removed.danglingReferrers, []);
      await (
        await cli.json([k.kind, 'show', k.name], { code: 3 })
      ).data;
    }
  });
});
