import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseSlash, words } from '../../src/presentation/tui/slash.ts';

describe('tui slash commands', () => {
  it('keeps quoted words together', () => {
    assert.deepEqual(words(`/plan use --goal "fix the tests" api`), ['/plan', 'use', '--goal', 'fix the tests', 'api']);
  });

  it('parses the commands a user types, with their arguments', () => {
    assert.deepEqual(parseSlash('/new --actor local/gpt --project api --skill a --skill b'), {
      ok: true,
      cmd: { name: 'new', actor: 'local/gpt', project: 'api', skills: ['a', 'b'] },
    });
    assert.deepEqual(parseSlash('/session 01ABC'), { ok: true, cmd: { name: 'session', id: '01ABC' } });
    assert.deepEqual(parseSlash('/plan 01P'), { ok: true, cmd: { name: 'plan', id: '01P' } });
    assert.deepEqual(parseSlash('/plan use builtin/replace api --arg pattern=a --arg replacement=b=c'), {
      ok: true,
      cmd: {
        name: 'plan-use',
        action: 'builtin/replace',
        projects: ['api'],
        args: { pattern: 'a', replacement: 'b=c' },
      },
    });
    assert.deepEqual(parseSlash('/plan use --goal "fix it" --project api --profile auto'), {
      ok: true,
      cmd: { name: 'plan-use', goal: 'fix it', projects: ['api'], args: {}, profile: 'auto' },
    });
    // The hint of a goal without an LLM actor names --actor: the TUI takes it as `agents plan use` does.
    assert.deepEqual(parseSlash('/plan use --goal "fix it" api --actor my/llm --execution-actor my/coder'), {
      ok: true,
      cmd: {
        name: 'plan-use',
        goal: 'fix it',
        projects: ['api'],
        args: {},
        actor: 'my/llm',
        executionActor: 'my/coder',
      },
    });
    assert.deepEqual(parseSlash('/plan use --goal g api --strategy-actor=my/thinker'), {
      ok: true,
      cmd: { name: 'plan-use', goal: 'g', projects: ['api'], args: {}, strategyActor: 'my/thinker' },
    });
    assert.deepEqual(parseSlash('/rollback 01CK'), { ok: true, cmd: { name: 'rollback', checkpoint: '01CK' } });
    assert.deepEqual(parseSlash('/rollback'), { ok: true, cmd: { name: 'rollback' } });
    assert.deepEqual(parseSlash('/correct --append use UTC'), {
      ok: true,
      cmd: { name: 'correct', text: 'use UTC', mode: 'append' },
    });
    assert.deepEqual(parseSlash('/correct use UTC'), {
      ok: true,
      cmd: { name: 'correct', text: 'use UTC', mode: 'revert' },
    });
    assert.deepEqual(parseSlash('/reject not that file'), {
      ok: true,
      cmd: { name: 'reject', guidance: 'not that file' },
    });
    assert.deepEqual(parseSlash('/EXIT'), { ok: true, cmd: { name: 'quit' } });
    for (const name of ['execute', 'apply', 'cancel', 'diff', 'help', 'plans', 'sessions', 'refresh', 'approve'])
      assert.deepEqual(parseSlash(`/${name}`), { ok: true, cmd: { name } });
  });

  it("parses the chat's commands on its session, with their arguments", () => {
    assert.deepEqual(parseSlash('/model'), { ok: true, cmd: { name: 'model' } });
    assert.deepEqual(parseSlash('/model local/coder'), { ok: true, cmd: { name: 'model', actor: 'local/coder' } });
    assert.deepEqual(parseSlash('/compact'), { ok: true, cmd: { name: 'compact' } });
    assert.deepEqual(parseSlash('/compact 0'), { ok: true, cmd: { name: 'compact', keepTurns: 0 } });
    assert.deepEqual(parseSlash('/diff 3'), { ok: true, cmd: { name: 'diff', turn: 3 } });
    for (const name of ['cost', 'clear', 'tools', 'context'] as const)
      assert.deepEqual(parseSlash(`/${name}`), { ok: true, cmd: { name } });
    assert.deepEqual(parseSlash('/quit'), { ok: true, cmd: { name: 'quit' } });
  });

  it("refuses a chat command's wrong arguments with its usage", () => {
    const twoActors = parseSlash('/model a b');
    assert.ok(!twoActors.ok && twoActors.message === '/model takes one actor name');
    assert.equal(!twoActors.ok && twoActors.hint, 'usage: /model [actor]');
    const keep = parseSlash('/compact 51');
    assert.ok(!keep.ok && keep.message === '/compact takes one number of turns to keep (0-50), not "51"');
    assert.equal(!keep.ok && keep.hint, 'usage: /compact [keep]');
    const turn = parseSlash('/diff HEAD');
    assert.ok(!turn.ok && turn.message === '/diff takes at most a turn number');
    assert.equal(!turn.ok && turn.hint, 'usage: /diff [turn]');
    const cost = parseSlash('/cost now');
    assert.ok(!cost.ok && cost.message === '/cost takes no arguments');
  });

  it('says what is wrong with a command, and how it is used', () => {
    assert.deepEqual(parseSlash('/frobnicate now'), {
      ok: false,
      message: 'unknown command /frobnicate',
      hint: 'type /help for the commands',
    });
    const noId = parseSlash('/session');
    assert.equal(noId.ok, false);
    assert.ok(!noId.ok && noId.message === '/session needs one session id' && noId.hint === 'usage: /session <id>');
    const extra = parseSlash('/execute now');
    assert.ok(!extra.ok && extra.message === '/execute takes no arguments' && extra.hint === 'usage: /execute');
    const noProject = parseSlash('/plan use builtin/replace');
    assert.ok(!noProject.ok && noProject.message === '/plan use needs at least one project');
    assert.match(noProject.hint ?? '', /usage: \/plan use <action> <project>…/);
    const badArg = parseSlash('/plan use builtin/replace api --arg nothing');
    assert.ok(!badArg.ok && badArg.message === '--arg nothing: must be name=value');
    const badFlag = parseSlash('/new --model x');
    assert.ok(!badFlag.ok && badFlag.message === 'unknown option --model');
    const noValue = parseSlash('/new --actor');
    assert.ok(!noValue.ok && noValue.message === '--actor needs a value');
    const noText = parseSlash('/correct');
    assert.ok(!noText.ok && /needs the guidance/.test(noText.message));
  });
});
