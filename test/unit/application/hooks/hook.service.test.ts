import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Artifact } from '../../../../src/domain/a2a.model.ts';
import { HookDefinition } from '../../../../src/domain/registry/hook.ts';
import { HookService, type HookContext, type HookRun } from '../../../../src/application/hooks/hook.service.ts';
import { toolCallHooks } from '../../../../src/application/hooks/tool-call-hooks.ts';
import type { HookInvocation, HookOutcome, HookRunner } from '../../../../src/application/ports/hook-runner.port.ts';
import { silentLogger } from '../../../../src/application/ports/logger.port.ts';

const def = (name: string, extra: Record<string, unknown> = {}): HookDefinition =>
  HookDefinition.parse({ name, event: 'before-tool-call', command: { program: '/bin/true' }, ...extra });

/** A runner whose outcome per hook is scripted; it records every invocation. */
class ScriptedRunner implements HookRunner {
  readonly calls: HookInvocation[] = [];
  private readonly outcomes: Record<string, HookOutcome | Error>;

  constructor(outcomes: Record<string, HookOutcome | Error>) {
    this.outcomes = outcomes;
  }
  run(inv: HookInvocation): Promise<HookOutcome> {
    this.calls.push(inv);
    const o = this.outcomes[inv.hook.name] ?? { answer: '', output: '', exitCode: 0 };
    return o instanceof Error ? Promise.reject(o) : Promise.resolve(o);
  }
}

function setup(hooks: HookDefinition[] | Error, outcomes: Record<string, HookOutcome | Error> = {}) {
  const runner = new ScriptedRunner(outcomes);
  const namespaces: string[] = [];
  const service = new HookService({
    hooksOf: (ns) => {
      namespaces.push(ns);
      return hooks instanceof Error ? Promise.reject(hooks) : Promise.resolve(hooks);
    },
    projectNetwork: () => Promise.resolve('allow'),
    runner,
    logger: silentLogger,
  });
  const artifacts: Artifact[] = [];
  const ctx: HookContext = {
    namespace: 'local',
    project: 'local/p',
    task: 'T1',
    session: 'S1',
    signal: new AbortController().signal,
    artifact: (a) => {
      artifacts.push(a);
      return Promise.resolve();
    },
  };
  const runs = (): HookRun[] => artifacts.map((a) => a.parts[0]?.data as HookRun);
  return { service, runner, ctx, artifacts, runs, namespaces };
}

describe('the hook service', () => {
  it('runs the matching hooks in order, gives each the event JSON, and records each run on the task', async () => {
    const { service, runner, ctx, runs, artifacts } = setup([
      def('local/a'),
      def('local/b', { tools: ['builtin/read-*'] }),
      def('local/c', { tools: ['builtin/write-*'] }),
      def('local/d', { event: 'after-tool-call' }),
      def('local/e', { project: 'local/other' }),
    ]);
    const r = await service.fire('before-tool-call', { tool: 'builtin/read-file', arguments: { path: 'x' } }, ctx);
    assert.equal(r.veto, undefined);
    assert.deepEqual(
      runner.calls.map((c) => c.hook.name),
      ['local/a', 'local/b'],
    );
    assert.deepEqual(JSON.parse(runner.calls[0]?.payload ?? ''), {
      event: 'before-tool-call',
      hook: 'local/a',
      project: 'local/p',
      session: 'S1',
      task: 'T1',
      tool: 'builtin/read-file',
      arguments: { path: 'x' },
    });
    assert.equal(runner.calls[0]?.timeoutMs, 10_000, 'the default timeout');
    assert.equal(runner.calls[0]?.network, 'allow', "the project's network setting");
    assert.deepEqual(
      runs().map((x) => [x.hook, x.event, x.tool, x.decision, x.exitCode]),
      [
        ['local/a', 'before-tool-call', 'builtin/read-file', 'allow', 0],
        ['local/b', 'before-tool-call', 'builtin/read-file', 'allow', 0],
      ],
    );
    assert.deepEqual(
      artifacts.map((a) => [a.name, a.metadata]),
      [
        ['hook', { kind: 'hook' }],
        ['hook', { kind: 'hook' }],
      ],
    );
    assert.notEqual(artifacts[0]?.artifactId, artifacts[1]?.artifactId);
  });

  it('the first hook that denies vetoes, and the later ones do not run', async () => {
    const { service, runner, ctx, runs } = setup([def('local/a'), def('local/b'), def('local/c')], {
      'local/b': {
        answer: '{"decision":"deny","reason":"no"}',
        output: '{"decision":"deny","reason":"no"}',
        exitCode: 0,
      },
    });
    const r = await service.fire('before-tool-call', { tool: 't/x' }, ctx);
    assert.deepEqual(r.veto, { hook: 'local/b', reason: 'no' });
    assert.deepEqual(
      runner.calls.map((c) => c.hook.name),
      ['local/a', 'local/b'],
    );
    assert.deepEqual(
      runs().map((x) => [x.hook, x.decision, x.reason]),
      [
        ['local/a', 'allow', undefined],
        ['local/b', 'deny', 'no'],
      ],
    );
  });

  it('fails closed: a runner that throws, or hooks that cannot be read, veto a veto event', async () => {
    const thrown = setup([def('local/a')], { 'local/a': new Error('boom') });
    assert.deepEqual((await thrown.service.fire('before-tool-call', { tool: 't/x' }, thrown.ctx)).veto, {
      hook: 'local/a',
      reason: 'the hook failed, so the tool call is refused: it could not be run: boom',
    });
    const unread = setup(new Error('database is down'));
    assert.deepEqual((await unread.service.fire('before-apply', {}, unread.ctx)).veto, {
      hook: '(registry)',
      reason: 'the hooks could not be read: database is down',
    });
    assert.deepEqual(await unread.service.fire('after-apply', {}, unread.ctx), {});
  });

  it('an after hook never vetoes: a failing one is recorded as failed', async () => {
    const { service, ctx, runs } = setup([def('local/a', { event: 'after-tool-call' })], {
      'local/a': { answer: '{"decision":"deny"}', output: 'bad', exitCode: 2 },
    });
    assert.deepEqual(
      await service.fire('after-tool-call', { tool: 't/x' }, ctx),
      { ran: 1 },
      'it ran, and vetoes nothing',
    );
    assert.deepEqual(
      runs().map((x) => [x.decision, x.reason, x.output]),
      [['failed', 'it exited with status 2', 'bad']],
    );
  });

  it('keeps at most 4 KiB of output on the task, marked truncated', async () => {
    const { service, ctx, runs } = setup([def('local/a', { event: 'plan-phase', timeoutSeconds: 3 })], {
      'local/a': { answer: '', output: 'x'.repeat(10_000), exitCode: 0 },
    });
    await service.fire('plan-phase', { phase: 'execute' }, ctx);
    const [run] = runs();
    assert.equal(run?.output.length, 4096);
    assert.equal(run?.truncated, true);
  });

  it("runs a chat without a project in its owner's namespace, only global hooks; a plan's in its project's", async () => {
    const s = setup([def('local/global'), def('local/bound', { project: 'team/p' })]);
    const chat = toolCallHooks(s.service, { ...s.ctx, project: undefined, owner: 'alice', task: { id: 'T' } });
    await chat?.before('t/x', {});
    assert.deepEqual(s.namespaces, ['alice']);
    assert.deepEqual(
      s.runner.calls.map((c) => [c.hook.name, c.network]),
      [['local/global', 'none']],
    );
    const bound = toolCallHooks(s.service, { ...s.ctx, project: 'team/p', owner: 'alice', task: { id: 'T' } });
    await bound?.before('t/x', {});
    assert.deepEqual(s.namespaces, ['alice', 'team']);
  });

  it('an after-tool-call hook is given the result, its output cut to 64 KiB', async () => {
    const s = setup([def('local/a', { event: 'after-tool-call' })]);
    const hooks = toolCallHooks(s.service, { ...s.ctx, owner: 'local', task: { id: 'T' } });
    await hooks?.after('t/x', { a: 1 }, { ok: true, summary: 'done', output: 'y'.repeat(70_000) });
    const payload = JSON.parse(s.runner.calls[0]?.payload ?? '') as {
      result: { ok: boolean; summary: string; output: string; truncated: boolean };
      arguments: unknown;
    };
    assert.deepEqual(payload.arguments, { a: 1 });
    assert.equal(payload.result.output.length, 64 * 1024);
    assert.equal(payload.result.truncated, true);
    assert.equal(payload.result.summary, 'done');
  });
});

describe('a cancelled task', () => {
  it('stops its hooks: nothing is recorded and the event does not go on as answered', async () => {
    const abort = new AbortController();
    const artifacts: Artifact[] = [];
    const service = new HookService({
      hooksOf: () => Promise.resolve([def('local/a'), def('local/b')]),
      projectNetwork: () => Promise.resolve(undefined),
      runner: {
        run: () => {
          abort.abort();
          return Promise.resolve({ answer: '', output: '', failure: 'it was cancelled' });
        },
      },
      logger: silentLogger,
    });
    await assert.rejects(
      service.fire(
        'before-tool-call',
        { tool: 't/x' },
        {
          namespace: 'local',
          signal: abort.signal,
          artifact: (a) => {
            artifacts.push(a);
            return Promise.resolve();
          },
        },
      ),
      /hook local\/a was cancelled with its task/,
    );
    assert.deepEqual(artifacts, []);
  });
});
