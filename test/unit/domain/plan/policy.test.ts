/**
 * The policy decision (domain/plan/policy.ts) as a table: rules × calls → allowed / asked /
 * denied, with the rule that decided; and the built-in profiles behave as the old fixed profiles.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decideCall, patternMatches, PolicyRule, type PolicyCall } from '../../../../src/domain/plan/policy.ts';
import { BUILTIN_AUTOMATION_PROFILES } from '../../../../src/domain/registry/builtins.ts';
import { AutomationProfileDefinition } from '../../../../src/domain/registry/automation-profile.definition.ts';
import { policyOf } from '../../../../src/domain/plan/plan.ts';

const RULES: PolicyRule[] = [
  { command: 'npm test', decision: 'allow', reason: 'the tests' },
  { command: 'git *', decision: 'ask', reason: 'git changes history' },
  { command: 'rm -rf *', decision: 'deny', reason: 'never delete trees' },
  { command: 'curl *', decision: 'deny', reason: 'no network' },
  { tool: 'builtin/read-*', decision: 'allow' },
  { tool: 'local/fmt', command: 'prettier --write *', decision: 'allow' },
  { writes: true, tool: 'builtin/write-file', decision: 'ask' },
  { command: '*', tool: 'local/danger', decision: 'deny', reason: 'never' },
];
const profile = { profile: 'local/team', default: 'ask' as const, rules: RULES };
const run = (line: string): PolicyCall => ({ tool: 'builtin/run-command', writes: true, command: line.split(' ') });

// [what, call, decision, index of the deciding rule (undefined: the default)]
const TABLE: Array<[string, PolicyCall, 'allow' | 'ask' | 'deny', number | undefined]> = [
  ['an exact command', run('npm test'), 'allow', 0],
  ['an exact pattern does not match more words', run('npm test --watch'), 'ask', undefined],
  ['a prefix pattern', run('git commit -m wip'), 'ask', 1],
  ['"git *" does not match a bare git', run('git'), 'ask', undefined],
  ['deny', run('rm -rf build'), 'deny', 2],
  ['deny matches a program written with its directory', run('/bin/rm -rf /'), 'deny', 2],
  ['* matches across spaces and slashes', run('curl -s https://example.com/x'), 'deny', 3],
  ['a near miss is not a match (anchored at the start)', run('xrm -rf build'), 'ask', undefined],
  ['case matters', run('RM -rf build'), 'ask', undefined],
  ['* matches a single character', run('rm -rf .'), 'deny', 2],
  ['a tool glob', { tool: 'builtin/read-file', writes: false }, 'allow', 4],
  ['a tool glob does not match another tool', { tool: 'builtin/list-files', writes: false }, 'ask', undefined],
  [
    'tool and command both must match',
    { tool: 'local/fmt', writes: true, command: ['prettier', '--write', 'src'] },
    'allow',
    5,
  ],
  [
    'tool matches, command does not',
    { tool: 'local/fmt', writes: true, command: ['prettier', '--check', 'src'] },
    'ask',
    undefined,
  ],
  [
    'a command rule never matches a call that runs no command',
    { tool: 'local/danger', writes: false },
    'ask',
    undefined,
  ],
  ['deny wins over an earlier allow', { tool: 'local/danger', writes: true, command: ['npm', 'test'] }, 'deny', 7],
  ['writes and tool', { tool: 'builtin/write-file', writes: true }, 'ask', 6],
];

describe('policy decision table', () => {
  for (const [what, call, decision, index] of TABLE) {
    it(`${what}: ${call.command ? call.command.join(' ') : call.tool} → ${decision}${index === undefined ? ' (default)' : ` (rule ${index + 1})`}`, () => {
      const v = decideCall(profile, call);
      assert.equal(v.decision, decision);
      assert.equal(v.rule?.index, index);
      assert.equal(v.profile, 'local/team');
      if (index !== undefined) {
        assert.match(v.reason, new RegExp(`^rule ${index + 1} of local/team`));
        if (RULES[index]?.reason) assert.ok(v.reason.endsWith(RULES[index].reason), v.reason);
      } else assert.equal(v.reason, 'no rule of local/team matches: its default is ask');
    });
  }

  it('the first matching rule decides when none denies', () => {
    const v = decideCall(
      {
        profile: 'p',
        default: 'deny',
        rules: [
          { command: 'git *', decision: 'ask' },
          { command: 'git status', decision: 'allow' },
        ],
      },
      run('git status'),
    );
    assert.deepEqual([v.decision, v.rule?.index], ['ask', 0]);
  });

  it('* matches the empty run; the pattern is anchored at the end too', () => {
    assert.equal(patternMatches('git *', 'git '), true);
    assert.equal(patternMatches('*test', 'npm test'), true);
    assert.equal(patternMatches('npm', 'npm test'), false);
    assert.equal(patternMatches('a.c', 'abc'), false);
    assert.equal(patternMatches('(x)|[y]', '(x)|[y]'), true);
  });
});

describe('policy rule definitions', () => {
  it('refuses a rule that matches nothing in particular, a bad decision and doubled spaces', () => {
    const r = AutomationProfileDefinition.safeParse({
      name: 'local/p',
      default: 'maybe',
      rules: [{ decision: 'allow' }, { command: 'git  push', decision: 'deny' }, { tool: 'x', decision: 'never' }],
    });
    assert.equal(r.success, false);
    const issues = r.error?.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    assert.deepEqual(issues, [
      'default: must be allow, ask or deny',
      'rules.0.decision: a rule matches on tool, command or writes (for every call, set the profile default)',
      'rules.1.command: separate words with single spaces',
      'rules.2.decision: must be allow, ask or deny',
    ]);
  });
});

describe('built-in automation profiles', () => {
  const builtin = (name: string) => {
    const d = BUILTIN_AUTOMATION_PROFILES.find((p) => p.name === name);
    assert.ok(d);
    return { ...d, profile: d.name, rules: d.rules ?? [] };
  };
  const write = { tool: 'builtin/write-file', writes: true };
  const read = { tool: 'builtin/read-file', writes: false };
  const command = { tool: 'builtin/run-command', writes: true, command: ['rm', '-rf', 'x'] };

  it('are valid definitions', () => {
    for (const p of BUILTIN_AUTOMATION_PROFILES)
      assert.equal(AutomationProfileDefinition.safeParse(p).success, true, p.name);
  });

  it('manual asks before every call of a tool that writes, runs the others, and asks before the apply', () => {
    const m = builtin('builtin/manual');
    assert.deepEqual(
      [write, command, read].map((c) => decideCall(m, c).decision),
      ['ask', 'ask', 'allow'],
    );
    assert.equal(m.applyApproval, true);
  });

  it('trusted runs everything and asks before the apply; auto asks nothing', () => {
    for (const [name, apply] of [
      ['builtin/trusted', true],
      ['builtin/auto', false],
    ] as const) {
      const p = builtin(name);
      assert.deepEqual(
        [write, command, read].map((c) => decideCall(p, c).decision),
        ['allow', 'allow', 'allow'],
      );
      assert.equal(p.applyApproval, apply);
    }
  });

  it('a plan stored before profiles were entities runs under the built-in its short name names', () => {
    const at = '2026-01-01T00:00:00.000Z';
    assert.equal(policyOf({ automationProfile: 'manual', createdAt: at }).profile, 'builtin/manual');
    assert.equal(policyOf({ automationProfile: 'auto', createdAt: at }).applyApproval, false);
    assert.throws(() => policyOf({ automationProfile: 'local/gone', createdAt: at }), /keeps no copy of its rules/);
  });
});
