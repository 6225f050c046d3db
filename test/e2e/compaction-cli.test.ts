/**
 * End to end: long sessions through the built `agents` CLI, in local mode and against `agents
 * serve` — an actor with a low compaction threshold compacts its session's older turns by itself
 * (the next request carries the summary), `agents session show` shows the compaction and still
 * every turn, and `agents session compact <id> [--keep N]` compacts on demand (refused, with a
 * reason, for a built-in actor's session and when there is nothing to compact).
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import { startFakeOpenAI, type FakeLlm } from '../support/fake-llm.ts';
import { e2eRoot, inBothModes, type Mode } from '../support/modes.ts';

const ROOT = e2eRoot('agents-compact-e2e');
const KEY = 'sk-e2e-compact-0123456789';

let fake: FakeLlm;

type Body = { messages: Array<{ role: string; content?: unknown }> };
const said = (i: number): string => JSON.stringify((fake.generations[i]?.body as Body).messages);
/** About 250 tokens of words no other turn uses. */
const long = (tag: string): string[] => Array.from({ length: 10 }, () => `${tag} apple banana cherry `.repeat(5));

before(async () => {
  fake = await startFakeOpenAI({ expectKey: KEY });
});

after(async () => {
  await fake?.close();
});

/** The same story in both modes. */
function story({ name: mode, cli }: Mode): void {
  const send = async (session: string, text: string, ...reply: string[]): Promise<any> => {
    fake.push({ text: reply });
    const out = await cli.ok(['send', '--session', session, text]);
    assert.equal(out.task.status.state, 'TASK_STATE_COMPLETED');
    return out.task;
  };
  let actor: string;

  before(async () => {
    actor = `local/long-${mode}`;
    const f = join(ROOT, `${mode}.yaml`);
    writeFileSync(
      f,
      [
        `name: ${actor}`,
        'provider: openai-compatible',
        'model: fake-model',
        `baseUrl: ${fake.url}`,
        'apiKeyEnv: COMPACT_E2E_KEY',
        'maxRetries: 0',
        'contextWindow: 1000',
        'maxTokens: 200',
        'compaction:',
        '  threshold: 0.35',
        '  keepTurns: 1',
        '',
      ].join('\n'),
    );
    const res = await cli.run(['actor', 'add', '--config', f]);
    assert.equal(res.code, 0, res.stderr);
  });

  it('compacts by itself at the threshold, shows it in session show, and compacts on demand', async () => {
    const s = (await cli.ok(['session', 'create', '--actor', actor])).session.id as string;
    const t1 = await send(s, 'first question', ...long('oldfact'));
    await send(s, 'second question', ...long('middle'));
    fake.push({ text: ['SUMMARY-ONE about oldfact'] });
    const at = fake.generations.length;
    const t3 = await send(s, 'third question', 'third answer');
    assert.match(said(at), /You write the summary of a conversation/);
    assert.match(said(at + 1), /SUMMARY-ONE about oldfact/);
    assert.match(said(at + 1), /1 turn was compacted into a summary/);
    assert.doesNotMatch(said(at + 1), /first question/);
    assert.equal(t3.metadata.context.compaction.covers[0], t1.id);

    const shown = await cli.run(['--format', 'rich', 'session', 'show', s]);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /compaction: 1 turn summarised by local\/long-\w+ \(fake-model\)/);
    assert.match(shown.stdout, /summary {2}SUMMARY-ONE about oldfact/);
    assert.match(shown.stdout, /you {4}first question/, 'the original turn is still shown');
    assert.match(shown.stdout, /context {2}the summary of 1 earlier turns \(compaction /);
    const plain = await cli.run(['--format', 'plain', 'session', 'show', s]);
    assert.match(plain.stdout, /^compaction\t\S+\t1\tSUMMARY-ONE about oldfact$/m);
    assert.match(plain.stdout, /^turn\t\S+\tcompleted\tfirst question\t/m);
    const original = await cli.ok(['task', 'get', t1.id]);
    assert.match(JSON.stringify(original.task ?? original), /oldfact/);

    fake.push({ text: ['SUMMARY-TWO'] });
    const before = fake.generations.length;
    const compacted = await cli.run(['--format', 'rich', 'session', 'compact', s, '--keep', '0']);
    assert.equal(compacted.code, 0, compacted.stderr);
    assert.match(compacted.stdout, new RegExp(`^Compacted 2 turns of session ${s} \\(task \\S+\\)$`, 'm'));
    assert.match(compacted.stdout, /compaction: 3 turns summarised/);
    assert.match(compacted.stdout, /^SUMMARY-TWO$/m);
    assert.match(said(before), /SUMMARY-ONE about oldfact/, 'the new summary folds the first one in');
    assert.match(said(before), /third question/);

    const nothing = await cli.run(['session', 'compact', s]);
    assert.equal(nothing.code, 5, nothing.stdout);
    assert.match(nothing.stderr, /Nothing to compact in session/);
  });

  it('session compact --format json has the task and the count; a built-in actor session is refused', async () => {
    const s = (await cli.ok(['session', 'create', '--actor', actor])).session.id as string;
    await send(s, 'alpha', 'a1');
    await send(s, 'beta', 'b1');
    fake.push({ text: ['SUMMARY-J'] });
    const res = await cli.ok(['session', 'compact', s, '--keep', '1']);
    assert.equal(res.compacted, 1);
    assert.equal(res.task.metadata.cleveragents.kind, 'compaction');
    assert.equal(res.task.artifacts[0].parts[0].text, 'SUMMARY-J');

    const echo = (await cli.ok(['session', 'create', '--actor', 'builtin/echo'])).session.id as string;
    const refused = await cli.run(['session', 'compact', echo]);
    assert.equal(refused.code, 5);
    assert.match(refused.stderr, /talks to builtin\/echo, which is not an LLM actor/);
    const usage = await cli.run(['session', 'compact', s, '--keep', '51']);
    assert.equal(usage.code, 2, usage.stderr);
  });

  it('a fork of a compacted session sends the summary, not the turns it covers; chat recaps the compaction', async () => {
    const s = (await cli.ok(['session', 'create', '--actor', actor])).session.id as string;
    await send(s, 'gamma question', 'g1');
    await send(s, 'delta question', 'd1');
    fake.push({ text: ['SUMMARY-F of gamma and delta'] });
    const compacted = await cli.ok(['session', 'compact', s, '--keep', '0']);
    const fork = (await cli.ok(['session', 'fork', s])).session.id as string;
    assert.notEqual(fork, s);
    const at = fake.generations.length;
    await send(fork, 'epsilon question', 'e1');
    assert.match(said(at), /SUMMARY-F of gamma and delta/, "the fork's copy of the compaction stands in for its turns");
    assert.doesNotMatch(
      said(at),
      /gamma question|delta question/,
      'the covered turns (copied with new ids) are not sent',
    );

    const chat = await cli.run(['--format', 'plain', 'chat', '--session', s]);
    assert.equal(chat.code, 0, chat.stderr);
    assert.match(
      chat.stdout,
      new RegExp(`^recap\\t${compacted.task.id as string}\\tcompaction\\t\\tcompaction: 2 turns summarised`, 'm'),
    );
    assert.match(chat.stdout, /^recap\t\S+\tcompleted\tdelta question\td1$/m);
  });
}

inBothModes(
  'agents session compact',
  { root: ROOT, env: { COMPACT_E2E_KEY: KEY, CLEVERAGENTS_LLM_RETRY_BASE_MS: '20' } },
  story,
);
