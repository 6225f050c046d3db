/**
 * Contract cases of chat with an LLM actor, over every transport: the real provider code talks
 * HTTP to the fake OpenAI-compatible and Anthropic servers (test/support/fake-llm.ts), the agent
 * streams what they send, runs tool calls, keeps usage, and cancels the provider request.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import {
  actorRegistry,
  cancelTask,
  getTask,
  projectRegistry,
  resourceRegistry,
  sendStreamingMessage,
  sessionCompact,
  sessionCreate,
  sessionShow,
  type A2AClient,
  type StreamResponse,
  type Task,
} from '../../src/protocol/client/index.ts';
import { createGate, startFakeAnthropic, startFakeOpenAI, type FakeLlm } from '../support/fake-llm.ts';
import { tempDir } from '../support/harness.ts';
import { makeRepo } from './registry.suite.ts';
import type { SuiteContext } from './suite-context.ts';

/** The key the fakes expect; the agent reads it from its environment (LLM_TEST_KEY). */
export const LLM_TEST_KEY = 'sk-contract-0123456789';

export interface Turn {
  events: StreamResponse[];
  /** The text of the `response` artifact chunks, in order. */
  chunks: string[];
  task: Task;
}

/** Streams one message and reads the task afterwards. */
export async function streamTurn(
  client: A2AClient,
  text: string,
  ids: { contextId?: string; taskId?: string } = {},
  onEvent?: (ev: StreamResponse, events: StreamResponse[]) => Promise<void> | void,
): Promise<Turn> {
  const events: StreamResponse[] = [];
  const message = {
    messageId: `m-${Math.random().toString(36).slice(2)}`,
    role: 'ROLE_USER' as const,
    parts: [{ text }],
    ...ids,
  };
  let taskId = ids.taskId;
  for await (const { event } of client.stream(sendStreamingMessage, { message })) {
    events.push(event);
    if ('task' in event) taskId = event.task.id;
    if ('statusUpdate' in event) taskId = event.statusUpdate.taskId;
    if (onEvent) await onEvent(event, events);
  }
  assert.ok(taskId, 'the stream named its task');
  const task = await client.call(getTask, { id: taskId });
  const chunks = events.flatMap((e) =>
    'artifactUpdate' in e && e.artifactUpdate.artifact.artifactId === 'response'
      ? e.artifactUpdate.artifact.parts.map((p) => p.text ?? '')
      : [],
  );
  return { events, chunks, task };
}

/** The data parts of the task's tool-call artifacts (their last state). */
export function toolCalls(task: Task): Array<Record<string, unknown>> {
  return (task.artifacts ?? [])
    .filter((a) => a.name === 'tool-call')
    .map((a) => a.parts[0]?.data as Record<string, unknown>);
}

export const statusText = (t: Task): string => (t.status.message?.parts ?? []).map((p) => p.text ?? '').join('');

export async function addActor(client: A2AClient, definition: Record<string, unknown>): Promise<void> {
  await client.call(actorRegistry.add, { definition: definition });
}

export function llmSuite(ctx: SuiteContext): void {
  let client: A2AClient;
  let openai: FakeLlm;
  let anthropic: FakeLlm;
  let work: string;

  before(async () => {
    client = ctx.harness().client;
    openai = await startFakeOpenAI({ expectKey: LLM_TEST_KEY });
    anthropic = await startFakeAnthropic({ expectKey: LLM_TEST_KEY });
    work = tempDir('ca-llm-');
    const repo = makeRepo(join(work, 'repo'));
    writeFileSync(join(repo, 'notes.txt'), 'the answer is 42\n');
    await addActor(client, {
      name: 'local/gpt',
      provider: 'openai-compatible',
      model: 'fake-model',
      baseUrl: openai.url,
      apiKeyEnv: 'LLM_TEST_KEY',
      systemPrompt: 'You are a test.',
      prices: { inputPerMillion: 2, outputPerMillion: 8 },
      tools: ['builtin/read-file'],
    });
    await addActor(client, {
      name: 'local/claude',
      provider: 'anthropic',
      model: 'fake-model',
      baseUrl: anthropic.url,
      apiKeyEnv: 'LLM_TEST_KEY',
    });
    await client.call(resourceRegistry.add, {
      definition: { name: 'local/llm-repo', type: 'git-checkout', path: repo },
    });
    await client.call(projectRegistry.add, {
      definition: { name: 'local/llm-repo', resources: ['local/llm-repo'] },
    });
  });

  after(async () => {
    await openai?.close();
    await anthropic?.close();
  });

  it('streams an LLM answer as its chunks arrive, and keeps usage and cost on the task', async () => {
    const gate = createGate();
    openai.push({ text: ['Hel', 'lo', ' there'], gate: gate.promise, holdAfter: 1, usage: { input: 11, output: 3 } });
    const before = openai.generations.length;
    const session = await client.call(sessionCreate, { actor: 'local/gpt' });
    let early = false;
    const turn = await streamTurn(client, 'hi', { contextId: session.id }, (ev, events) => {
      // The first chunk reached us while the provider still holds the rest: nothing was buffered.
      if ('artifactUpdate' in ev && !early) {
        early = !events.some((e) => 'statusUpdate' in e && e.statusUpdate.status.state === 'TASK_STATE_COMPLETED');
        assert.equal(ev.artifactUpdate.artifact.parts[0]?.text, 'Hel');
        gate.release();
      }
    });
    assert.ok(early, 'a chunk arrived before the turn ended');
    assert.equal(turn.chunks.join(''), 'Hello there');
    assert.equal(turn.task.status.state, 'TASK_STATE_COMPLETED');
    assert.deepEqual(turn.task.metadata?.['usage'], {
      actor: 'local/gpt',
      provider: 'openai-compatible',
      model: 'fake-model',
      inputTokens: 11,
      outputTokens: 3,
      steps: 1,
      toolCalls: 0,
      cost: { amount: 0.000046, currency: 'USD' },
    });
    const req = openai.generations[before];
    assert.ok(req);
    assert.equal(req.headers['authorization'], `Bearer ${LLM_TEST_KEY}`);
    const body = req.body as { messages: Array<{ role: string; content: unknown }>; stream: boolean };
    assert.equal(body.stream, true);
    assert.equal(body.messages[0]?.role, 'system');
    // The system prompt, then what this turn cannot offer (no project: no file tools).
    assert.match(
      String(body.messages[0]?.content),
      /^You are a test\.\n\nUnavailable in this turn: tool builtin\/read-file/,
    );
    assert.deepEqual(body.messages.at(-1), { role: 'user', content: 'hi' });

    // The next turn of the session sends the history.
    openai.push({ text: ['again'] });
    await streamTurn(client, 'and now?', { contextId: session.id });
    const second = openai.generations.at(-1)?.body as { messages: Array<{ role: string; content: unknown }> };
    assert.deepEqual(
      second.messages.slice(1).map((m) => [m.role, m.content]),
      [
        ['user', 'hi'],
        ['assistant', 'Hello there'],
        ['user', 'and now?'],
      ],
    );
  });

  it("runs the model's tool calls on the session's project and feeds the results back", async () => {
    openai.push(
      { toolCalls: [{ id: 'call_1', name: 'builtin__read-file', arguments: '{"path":"notes.txt"}', chunks: 4 }] },
      { text: ['It is 42.'], usage: { input: 30, output: 4 } },
    );
    const session = await client.call(sessionCreate, { actor: 'local/gpt', project: 'local/llm-repo' });
    assert.equal(session.project, 'local/llm-repo');
    const turn = await streamTurn(client, 'what does notes.txt say?', { contextId: session.id });
    assert.equal(turn.task.status.state, 'TASK_STATE_COMPLETED', statusText(turn.task));
    assert.equal(turn.chunks.join(''), 'It is 42.');
    const [call] = toolCalls(turn.task);
    assert.equal(call?.['tool'], 'builtin/read-file');
    assert.equal(call?.['state'], 'done');
    assert.equal(call?.['ok'], true);
    assert.deepEqual(call?.['arguments'], { path: 'notes.txt' });
    assert.equal(typeof call?.['durationMs'], 'number');
    // Clients saw the call while it ran, then its result.
    const states = turn.events.flatMap((e) =>
      'artifactUpdate' in e && e.artifactUpdate.artifact.name === 'tool-call'
        ? [(e.artifactUpdate.artifact.parts[0]?.data as { state: string }).state]
        : [],
    );
    assert.deepEqual(states, ['running', 'done']);
    const body = openai.generations.at(-1)?.body as {
      messages: Array<{ role: string; content?: unknown; tool_call_id?: string }>;
      tools: Array<{ function: { name: string } }>;
    };
    assert.ok(body.tools.some((t) => t.function.name === 'builtin__read-file'));
    const result = body.messages.find((m) => m.role === 'tool');
    assert.equal(result?.tool_call_id, 'call_1');
    assert.match(String(result?.content), /the answer is 42/);
  });

  it('CancelTask aborts the provider request at once and the task ends canceled', async () => {
    const gate = createGate();
    openai.push({ text: ['one', 'two', 'three'], gate: gate.promise, holdAfter: 1 });
    const before = openai.generations.length;
    const session = await client.call(sessionCreate, { actor: 'local/gpt' });
    const turn = await streamTurn(client, 'go on forever', { contextId: session.id }, async (ev) => {
      if ('artifactUpdate' in ev && ev.artifactUpdate.artifact.artifactId === 'response')
        await client.call(cancelTask, { id: ev.artifactUpdate.taskId });
    });
    assert.equal(turn.task.status.state, 'TASK_STATE_CANCELED');
    const req = openai.generations[before];
    assert.ok(req);
    await req.closed;
    assert.equal(req.aborted, true, 'the agent hung up on the provider');
    gate.release();
  });

  it('a wrong key fails the turn with a hint, and the key is never shown', async () => {
    await addActor(client, {
      name: 'local/wrong-key',
      provider: 'openai-compatible',
      model: 'fake-model',
      baseUrl: openai.url,
      apiKeyEnv: 'LLM_WRONG_KEY',
    });
    const session = await client.call(sessionCreate, { actor: 'local/wrong-key' });
    const turn = await streamTurn(client, 'hi', { contextId: session.id });
    assert.equal(turn.task.status.state, 'TASK_STATE_FAILED');
    const text = statusText(turn.task);
    assert.match(text, /401/);
    assert.match(text, /LLM_WRONG_KEY/);
    assert.doesNotMatch(JSON.stringify(turn.task), /sk-wrong/);
  });

  it('an Anthropic actor streams and calls tools the same way', async () => {
    anthropic.push(
      { toolCalls: [{ id: 'toolu_1', name: 'builtin__read-file', arguments: '{"path":"notes.txt"}' }] },
      { text: ['Forty', '-two.'], usage: { input: 20, output: 5 } },
    );
    await addActor(client, {
      name: 'local/claude-tools',
      provider: 'anthropic',
      model: 'fake-model',
      baseUrl: anthropic.url,
      apiKeyEnv: 'LLM_TEST_KEY',
      tools: ['builtin/read-file'],
    });
    const session = await client.call(sessionCreate, { actor: 'local/claude-tools', project: 'local/llm-repo' });
    const turn = await streamTurn(client, 'read notes.txt', { contextId: session.id });
    assert.equal(turn.task.status.state, 'TASK_STATE_COMPLETED', statusText(turn.task));
    assert.equal(turn.chunks.join(''), 'Forty-two.');
    assert.equal(toolCalls(turn.task)[0]?.['ok'], true);
    const req = anthropic.generations.at(-1);
    assert.equal(req?.headers['x-api-key'], LLM_TEST_KEY);
    const body = req?.body as {
      messages: Array<{ role: string; content: Array<{ type: string; content?: unknown }> }>;
    };
    const result = body.messages.flatMap((m) => m.content).find((c) => c.type === 'tool_result');
    assert.match(JSON.stringify(result), /the answer is 42/);
  });

  it("compacts a session's older turns on demand: the next turn is sent the summary in their place", async () => {
    const session = await client.call(sessionCreate, { actor: 'local/gpt' });
    for (const [q, a] of [
      ['what is the capital of France?', 'Paris.'],
      ['and of Italy?', 'Rome.'],
    ]) {
      openai.push({ text: [a as string] });
      await streamTurn(client, q as string, { contextId: session.id });
    }
    openai.push({ text: ['The user asked for capitals: France is Paris.'], usage: { input: 30, output: 9 } });
    const res = await client.call(sessionCompact, { sessionId: session.id, keepTurns: 1 });
    assert.equal(res.compacted, 1);
    const meta = res.task.metadata?.['cleveragents'] as { kind: string; covers: string[]; turns: number };
    assert.equal(meta.kind, 'compaction');
    assert.equal(meta.turns, 1);
    const shown = await client.call(sessionShow, { sessionId: session.id });
    assert.deepEqual(
      shown.tasks.map((t) => t.id),
      [...meta.covers, shown.tasks[1]?.id, res.task.id],
    );
    ctx.record('session/compact', { compacted: res.compacted, state: res.task.status.state, turns: meta.turns });
    openai.push({ text: ['Berlin.'] });
    await streamTurn(client, 'and Germany?', { contextId: session.id });
    const body = openai.generations.at(-1)?.body as { messages: Array<{ role: string; content: unknown }> };
    assert.match(String(body.messages[0]?.content), /France is Paris\./);
    assert.deepEqual(
      body.messages.slice(1).map((m) => m.content),
      ['and of Italy?', 'Rome.', 'and Germany?'],
    );
  });
}
