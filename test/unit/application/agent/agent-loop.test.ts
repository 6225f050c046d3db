/**
 * The agent loop with fake ports (a scripted model, fake tools, a recording recorder and gate):
 * every branch a chat turn, strategize and execute rely on — refused calls, policy, approvals with
 * "always", hooks, budgets mid-stream, the step limit, the window and cancellation.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_MALFORMED_STEPS, runAgentLoop, stepLimitNote } from '../../../../src/application/agent/agent-loop.ts';
import type {
  AgentConfig,
  AgentTool,
  AlwaysRule,
  CallEvent,
  ToolOutcome,
} from '../../../../src/application/agent/agent.types.ts';
import {
  ProviderFailure,
  type ModelEvent,
  type ModelMessage,
  type ModelRequest,
} from '../../../../src/application/ports/language-model.port.ts';
import type { Transcript } from '../../../../src/application/ports/transcript.port.ts';
import type { PolicyVerdict } from '../../../../src/domain/plan/policy.ts';
import { recordingTracer } from '../../../support/fakes/recording-tracer.ts';

type Step = Array<{ text: string } | { call: string; args: unknown; id?: string }>;

interface Harness {
  cfg: AgentConfig;
  t: Transcript;
  requests: Array<Omit<ModelRequest, 'actor' | 'apiKey'>>;
  ran: Array<{ tool: string; args: Record<string, unknown> }>;
  events: string[];
  asked: Array<{ ref: string; problem?: string | undefined }>;
  remembered: AlwaysRule[];
  saved: number;
  streamed: string;
  controller: AbortController;
}

const allow = (reason = 'allowed'): PolicyVerdict => ({ decision: 'allow', profile: 'test', reason });

function tool(ref: string, over: Partial<AgentTool> = {}): AgentTool {
  return {
    ref,
    modelName: ref.replace('/', '__'),
    description: ref,
    inputSchema: { type: 'object', properties: { path: { type: 'string' } }, additionalProperties: false },
    readOnly: false,
    writes: true,
    commandOf: () => undefined,
    run: () => Promise.resolve({ ok: true, summary: `${ref} ran`, output: `${ref} output` }),
    ...over,
  };
}

/** A model answering the scripted steps in order (then a plain "done"). */
function harness(script: Step[], over: Partial<AgentConfig> = {}, toolsOver?: AgentTool[]): Harness {
  const h = {
    requests: [],
    ran: [],
    events: [],
    asked: [],
    remembered: [],
    saved: 0,
    streamed: '',
    controller: new AbortController(),
  } as unknown as Harness;
  const tools = toolsOver ?? [
    tool('t/read', {
      readOnly: true,
      writes: false,
      run: (args) => {
        h.ran.push({ tool: 't/read', args });
        return Promise.resolve({ ok: true, summary: 'read', output: 'file text' });
      },
    }),
    tool('t/write', {
      run: (args) => {
        h.ran.push({ tool: 't/write', args });
        return Promise.resolve({ ok: true, summary: 'wrote', output: '' });
      },
    }),
  ];
  let i = 0;
  h.t = {
    messages: [{ role: 'user', text: 'go' }],
    steps: 0,
    usage: { inputTokens: 0, outputTokens: 0 },
    toolCalls: 0,
  };
  h.cfg = {
    model: {
      name: 'fake',
      count: (s) => Promise.resolve(Math.ceil(s.length / 4)),
      async *stream(req): AsyncIterable<ModelEvent> {
        h.requests.push(structuredClone({ ...req, signal: undefined }) as never);
        const step = script[i++] ?? [{ text: 'done' }];
        for (const part of step) {
          if (req.signal.aborted) throw new ProviderFailure('cancelled', 'cancelled', '');
          if ('text' in part) yield { type: 'text', delta: part.text };
          else
            yield {
              type: 'tool-call',
              call: {
                id: part.id ?? `c${i}-${part.call}`,
                name: part.call,
                arguments: typeof part.args === 'string' ? part.args : JSON.stringify(part.args),
              },
            };
          await Promise.resolve();
        }
        yield { type: 'finish', reason: 'stop', usage: { inputTokens: 10, outputTokens: 5 } };
      },
    },
    system: 'You test.',
    tools,
    decide: (t) => (t.readOnly ? allow('read-only') : allow()),
    approvals: {
      always: () => h.remembered,
      remember: (r) => {
        h.remembered.push(r);
        return Promise.resolve();
      },
      ask: (e) => {
        h.asked.push({ ref: e.ref, problem: e.problem });
        return Promise.resolve();
      },
    },
    recorder: {
      notRun: (e: CallEvent & { state: string; summary: string }) => {
        h.events.push(`${e.state} ${e.ref}: ${e.summary}`);
        return Promise.resolve();
      },
      started: (e) => {
        h.events.push(`start ${e.ref}`);
        return Promise.resolve(e.ref);
      },
      finished: (e: { ref: string; outcome: ToolOutcome }) => {
        h.events.push(`end ${e.ref} ${e.outcome.ok ? 'ok' : 'failed'}`);
        return Promise.resolve();
      },
    },
    budget: { afterStep: () => undefined },
    validate: (schema, value) => {
      const v = value as Record<string, unknown>;
      return Object.keys(v).some((k) => !(k in ((schema['properties'] as object) ?? {})))
        ? ['must NOT have additional properties']
        : typeof v['path'] === 'number'
          ? ['/path must be string']
          : [];
    },
    signal: h.controller.signal,
    maxSteps: 5,
    window: { contextWindow: 100_000, reserve: 1000 },
    onText: (d) => {
      h.streamed += d;
      return Promise.resolve();
    },
    save: () => {
      h.saved++;
      return Promise.resolve();
    },
    ...over,
  };
  return h;
}

const lastTool = (h: Harness): string[] => {
  const m = h.requests.at(-1)?.messages.filter((x): x is Extract<ModelMessage, { role: 'tool' }> => x.role === 'tool');
  return (m?.at(-1)?.results ?? []).map((r) => r.output);
};

describe('the agent loop', () => {
  it('runs a read-only call, feeds its result back and ends when the model answers in words', async () => {
    const h = harness([[{ text: 'Reading.' }, { call: 't__read', args: { path: 'a' } }], [{ text: 'All good.' }]]);
    const out = await runAgentLoop(h.cfg, h.t);
    assert.deepEqual(out, { kind: 'answered', text: 'All good.', reason: 'stop' });
    assert.deepEqual(h.ran, [{ tool: 't/read', args: { path: 'a' } }]);
    assert.deepEqual(lastTool(h), ['file text']);
    assert.deepEqual(h.events, ['start t/read', 'end t/read ok']);
    assert.equal(h.streamed, 'Reading.All good.');
    assert.deepEqual([h.t.steps, h.t.toolCalls, h.t.usage.inputTokens], [2, 1, 20]);
  });

  it('tells the model of an unknown tool, arguments that are not JSON, and arguments off the schema', async () => {
    const h = harness([
      [
        { call: 'nope', args: {} },
        { call: 't__read', args: '{"path": "a"' },
        { call: 't__read', args: { path: 5 } },
      ],
    ]);
    await runAgentLoop(h.cfg, h.t);
    const told = lastTool(h);
    assert.match(told[0] ?? '', /There is no tool named nope\. Tools you can call: t__read, t__write/);
    assert.match(told[1] ?? '', /not valid JSON/);
    assert.match(told[2] ?? '', /do not match the tool's input schema: \/path must be string/);
    assert.equal(h.ran.length, 0);
    assert.equal(h.events.filter((e) => e.startsWith('invalid')).length, 3);
  });

  it(`gives up after ${MAX_MALFORMED_STEPS} steps of only invalid calls`, async () => {
    const bad = [{ call: 'nope', args: {} }];
    const h = harness([bad, bad, bad, bad]);
    const out = await runAgentLoop(h.cfg, h.t);
    assert.equal(out.kind, 'invalid-calls');
    assert.equal(h.requests.length, MAX_MALFORMED_STEPS);
  });

  it('a tool that throws is a failed call the model is told of, not a failed loop', async () => {
    const h = harness([[{ call: 't__write', args: { path: 'a' } }]], {}, [
      tool('t/write', { run: () => Promise.reject(new Error('disk full')) }),
    ]);
    const out = await runAgentLoop(h.cfg, h.t);
    assert.equal(out.kind, 'answered');
    assert.match(lastTool(h)[0] ?? '', /t\/write failed: disk full/);
    assert.deepEqual(h.events, ['start t/write', 'end t/write failed']);
  });

  it('a denied call is told and recorded, and the loop goes on', async () => {
    const h = harness([[{ call: 't__write', args: { path: 'a' } }]], {
      decide: () => ({ decision: 'deny', profile: 'p', reason: 'rule 1 of p' }),
      policyName: "the plan's automation profile",
    });
    await runAgentLoop(h.cfg, h.t);
    assert.equal(h.ran.length, 0);
    assert.match(lastTool(h)[0] ?? '', /^Not allowed by the plan's automation profile: rule 1 of p/);
    assert.deepEqual(h.events, ['denied t/write: rule 1 of p']);
  });

  describe('approvals', () => {
    const ask = (): Partial<AgentConfig> => ({
      decide: (t) => (t.readOnly ? allow() : { decision: 'ask', profile: 'p', reason: 'writes are asked' }),
    });
    const step: Step[] = [[{ call: 't__write', args: { path: 'a' }, id: 'w1' }]];

    it('a call that needs a person saves the transcript, asks with a preview and waits', async () => {
      let previewed = false;
      const h = harness(step, ask(), [
        tool('t/write', {
          preview: () => {
            previewed = true;
            return Promise.resolve({ diff: '+a' });
          },
        }),
      ]);
      const out = await runAgentLoop(h.cfg, h.t);
      assert.deepEqual(out, { kind: 'waiting' });
      assert.equal(h.saved, 1);
      assert.ok(previewed);
      assert.deepEqual(h.asked, [{ ref: 't/write', problem: undefined }]);
      assert.equal(h.t.pending?.next, 0);
    });

    it('yes runs the call; no with guidance tells the model what the user said', async () => {
      const h = harness(step, ask());
      await runAgentLoop(h.cfg, h.t);
      const yes = harness([], { ...ask(), answer: { callId: 'w1', answer: { decision: 'approve' } } });
      yes.t = h.t;
      assert.equal((await runAgentLoop(yes.cfg, yes.t)).kind, 'answered');
      assert.deepEqual(yes.ran, [{ tool: 't/write', args: { path: 'a' } }]);

      const h2 = harness(step, ask());
      await runAgentLoop(h2.cfg, h2.t);
      const no = harness([], {
        ...ask(),
        answer: { callId: 'w1', answer: { decision: 'reject', guidance: 'use b' } },
      });
      no.t = h2.t;
      await runAgentLoop(no.cfg, no.t);
      assert.equal(no.ran.length, 0);
      assert.match(lastTool(no)[0] ?? '', /declined this call; it did not run\. They said: use b/);
      assert.deepEqual(no.events, ['declined t/write: declined by the user: use b']);
    });

    it('an answer that cannot be read asks again, saying so', async () => {
      const h = harness(step, ask());
      await runAgentLoop(h.cfg, h.t);
      const again = harness([], { ...ask(), answerProblem: 'Not a valid answer' });
      again.t = h.t;
      assert.deepEqual(await runAgentLoop(again.cfg, again.t), { kind: 'waiting' });
      assert.deepEqual(again.asked, [{ ref: 't/write', problem: 'Not a valid answer' }]);
    });

    it('"always" for a command covers later calls with the same command prefix, not others', async () => {
      const cmd = tool('t/bash', {
        inputSchema: { type: 'object', properties: { command: { type: 'string' } } },
        commandOf: (a) => String(a['command']).split(' '),
      });
      const h = harness([[{ call: 't__bash', args: { command: 'npm test' }, id: 'b1' }]], ask(), [cmd]);
      await runAgentLoop(h.cfg, h.t);
      const next = harness(
        [
          [{ call: 't__bash', args: { command: 'npm test -- --watch' }, id: 'b2' }],
          [{ call: 't__bash', args: { command: 'rm -rf x' }, id: 'b3' }],
        ],
        { ...ask(), answer: { callId: 'b1', answer: { decision: 'approve', always: 'command' } } },
        [cmd],
      );
      next.t = h.t;
      const out = await runAgentLoop(next.cfg, next.t);
      assert.deepEqual(next.remembered, [{ tool: 't/bash', commandPrefix: ['npm', 'test'] }]);
      assert.deepEqual(out, { kind: 'waiting' }, 'rm -rf is asked');
      assert.deepEqual(
        next.events.filter((e) => e.startsWith('start')),
        ['start t/bash', 'start t/bash'],
        'npm test and npm test -- --watch ran without asking',
      );
      assert.deepEqual(next.asked, [{ ref: 't/bash', problem: undefined }]);
    });

    it('yes (plan execute --yes) takes every ask as approved', async () => {
      const h = harness(step, {
        ...ask(),
        approvals: {
          yes: true,
          always: () => [],
          remember: () => Promise.resolve(),
          ask: () => Promise.reject(new Error('never asked')),
        },
      });
      assert.equal((await runAgentLoop(h.cfg, h.t)).kind, 'answered');
      assert.equal(h.ran.length, 1);
    });
  });

  it('a hook veto stops the call and tells the model why', async () => {
    const h = harness([[{ call: 't__write', args: { path: 'a' } }]], {
      hooks: {
        ran: 1,
        before: () => Promise.resolve({ hook: 'local/no', message: 'not today' } as never),
        after: () => Promise.resolve(),
      },
    });
    await runAgentLoop(h.cfg, h.t);
    assert.equal(h.ran.length, 0);
    assert.match(h.events[0] ?? '', /^vetoed t\/write: /);
  });

  it('writes are checkpointed around the call; a checkpoint that fails means the call does not run', async () => {
    const seen: string[] = [];
    const h = harness(
      [
        [
          { call: 't__write', args: { path: 'a' } },
          { call: 't__read', args: { path: 'a' } },
        ],
      ],
      {
        beforeWrite: () => {
          seen.push('before');
          return Promise.resolve();
        },
        afterWrite: () => {
          seen.push('after');
          return Promise.resolve();
        },
      },
    );
    await runAgentLoop(h.cfg, h.t);
    assert.deepEqual(seen, ['before', 'after'], 'only the writing call');
    const broken = harness([[{ call: 't__write', args: { path: 'a' } }]], {
      beforeWrite: () => Promise.reject(new Error('no space')),
    });
    await runAgentLoop(broken.cfg, broken.t);
    assert.equal(broken.ran.length, 0);
    assert.match(lastTool(broken)[0] ?? '', /could not be recorded for undo \(no space\)/);
  });

  it('a budget spent mid-stream aborts the step there, keeping the partial answer', async () => {
    const words = Array.from({ length: 50 }, (_, i) => ({ text: `w${i} ` }));
    let after = 0;
    const h = harness([[...words, { call: 't__write', args: { path: 'a' } }]], {
      budget: {
        duringStep: (u) => (u.outputTokens > 10 ? { budget: 'tokens', message: 'budget exceeded: tokens' } : undefined),
        afterStep: (u) => {
          after = u.outputTokens;
        },
      },
    });
    const out = await runAgentLoop(h.cfg, h.t);
    assert.equal(out.kind, 'budget');
    assert.ok(out.kind === 'budget' && out.partial.startsWith('w0 ') && !out.partial.includes('w49'));
    assert.equal(h.ran.length, 0, 'the calls of a stopped step do not run');
    assert.ok(after > 10, 'the estimate is counted');
    assert.equal(h.t.messages.at(-1)?.role, 'assistant');
  });

  it('a budget checked before a step or a call stops the loop', async () => {
    const h = harness([[{ call: 't__write', args: { path: 'a' } }]], {
      budget: {
        beforeCall: () => ({ budget: 'tool-calls', message: '1 of 1 tool calls used' }),
        afterStep: () => undefined,
      },
    });
    const out = await runAgentLoop(h.cfg, h.t);
    assert.equal(out.kind, 'budget');
    assert.equal(h.ran.length, 0);
  });

  it('at maxSteps the model gets one last step with tool_choice none and the note', async () => {
    const call: Step = [{ call: 't__read', args: { path: 'a' } }];
    const h = harness([call, call, [{ text: 'I read a twice.' }]], { maxSteps: 2 });
    const out = await runAgentLoop(h.cfg, h.t);
    assert.deepEqual(out, { kind: 'step-limit', text: 'I read a twice.', steps: 3 });
    const last = h.requests.at(-1);
    assert.equal(last?.toolChoice, 'none');
    assert.deepEqual(last?.messages.at(-1), { role: 'user', text: stepLimitNote(2) });
  });

  it('a control tool ends the loop once its step is settled, even across an approval', async () => {
    const finish = {
      tool: { name: 'finish', description: 'end', inputSchema: {} },
      handle: () => ({ output: 'noted', isError: false, stop: true }),
    };
    const h = harness(
      [
        [
          { call: 'finish', args: {} },
          { call: 't__write', args: { path: 'a' }, id: 'w1' },
        ],
      ],
      { control: [finish], decide: () => ({ decision: 'ask', profile: 'p', reason: 'asked' }) },
    );
    assert.equal((await runAgentLoop(h.cfg, h.t)).kind, 'waiting');
    const resumed = harness([], {
      control: [finish],
      decide: () => ({ decision: 'ask', profile: 'p', reason: 'asked' }),
      answer: { callId: 'w1', answer: { decision: 'approve' } },
    });
    resumed.t = h.t;
    assert.deepEqual(await runAgentLoop(resumed.cfg, resumed.t), { kind: 'stopped' });
    assert.equal(resumed.requests.length, 0, 'no step after finish');
    assert.equal(resumed.ran.length, 1);
  });

  it('a conversation that does not fit the window ends the loop', async () => {
    const h = harness([], { window: { contextWindow: 10, reserve: 5 } });
    assert.deepEqual(await runAgentLoop(h.cfg, h.t), { kind: 'window', room: 5, reserve: 5, window: 10 });
  });

  it('the earlier turns fill the window newest first; the stable head is marked for caching', async () => {
    const turn = (n: number): ModelMessage[] => [
      { role: 'user', text: `question ${n} ${'x'.repeat(1200)}` },
      { role: 'assistant', text: `answer ${n}` },
    ];
    const h = harness([], { window: { contextWindow: 700, reserve: 100, history: [turn(1), turn(2), turn(3)] } });
    await runAgentLoop(h.cfg, h.t);
    const sent = h.requests[0]?.messages ?? [];
    assert.match(JSON.stringify(sent), /question 3/);
    assert.doesNotMatch(JSON.stringify(sent), /question 1/, 'the oldest turn does not fit');
    assert.equal(h.requests[0]?.stableMessages, sent.length);
  });

  it('cancelling aborts the running step and ends the loop with the cancel', async () => {
    const h = harness([[{ text: 'a' }, { text: 'b' }, { text: 'c' }]]);
    h.cfg.onText = (d) => {
      h.streamed += d;
      if (d === 'a') h.controller.abort();
      return Promise.resolve();
    };
    await assert.rejects(
      runAgentLoop(h.cfg, h.t),
      (e: unknown) => e instanceof ProviderFailure && e.kind === 'cancelled',
    );
    assert.equal(h.streamed, 'a');
  });

  it('cancelling while a tool runs records it cancelled and ends the loop', async () => {
    const h = harness([[{ call: 't__write', args: { path: 'a' } }]], {}, [
      tool('t/write', {
        run: () => {
          h.controller.abort();
          return Promise.resolve({ ok: true, summary: 'wrote', output: '' });
        },
      }),
    ]);
    await assert.rejects(
      runAgentLoop(h.cfg, h.t),
      (e: unknown) => e instanceof ProviderFailure && e.kind === 'cancelled',
    );
    assert.deepEqual(h.events, ['start t/write', 'end t/write failed']);
  });

  it('traces each model call as a chat span and each call that runs as an execute_tool span, within the caller’s span', async () => {
    const tracer = recordingTracer();
    const h = harness(
      [[{ call: 't__read', args: { path: 'a' }, id: 'c1' }], [{ call: 'nope', args: {} }], [{ text: 'All good.' }]],
      { tracer },
    );
    const turn = tracer.start('turn');
    await tracer.within(turn, () => runAgentLoop(h.cfg, h.t));
    const names = tracer.spans.map((s) => s.name);
    // The unknown tool is refused before it runs: no span for it.
    assert.deepEqual(names, ['turn', 'chat fake', 'execute_tool t/read', 'chat fake', 'chat fake']);
    for (const s of tracer.spans.slice(1)) {
      assert.equal(s.parent?.name, 'turn');
      assert.equal(s.ended, true);
    }
    const chat = tracer.spans[1];
    assert.equal(chat?.options.kind, 'client');
    assert.equal(chat?.attributes['gen_ai.operation.name'], 'chat');
    assert.equal(chat?.attributes['gen_ai.usage.input_tokens'], 10);
    const run = tracer.spans[2];
    assert.equal(run?.attributes['gen_ai.tool.name'], 't/read');
    assert.equal(run?.attributes['gen_ai.tool.call.id'], 'c1');
  });

  it('marks a failed tool call’s span failed', async () => {
    const tracer = recordingTracer();
    const failing = tool('t/read', {
      readOnly: true,
      writes: false,
      run: () => Promise.resolve({ ok: false, summary: 'no such file', output: '' }),
    });
    const h = harness([[{ call: 't__read', args: { path: 'a' } }], [{ text: 'ok' }]], { tracer }, [failing]);
    await runAgentLoop(h.cfg, h.t);
    const run = tracer.spans.find((s) => s.name === 'execute_tool t/read');
    assert.deepEqual(run?.errors, ['no such file']);
  });
});
