/**
 * What a chat with an LLM actor does beyond the happy path, through the real agent (in-memory
 * transport; the transports themselves are covered by the contract suite): the failures a user
 * meets, the window, the tool loop's refusals and limits, approvals answered yes and no, policy,
 * and MCP tools from a real MCP server.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import {
  automationProfileRegistry,
  cancelTask,
  getTask,
  projectRegistry,
  resourceRegistry,
  sessionCreate,
  sessionList,
  skillRegistry,
  type A2AClient,
} from '../../src/protocol/client/index.ts';
import { startFakeOpenAI, type FakeLlm, type FakeReply } from '../support/fake-llm.ts';
import { startHarness, tempDir, type Harness } from '../support/harness.ts';
import { freePort } from '../support/ports.ts';
import { addActor, LLM_TEST_KEY, statusText, streamTurn, toolCalls, type Turn } from './llm.suite.ts';
import { rpcError } from './a2a.suite.ts';
import { makeRepo } from './registry.suite.ts';

process.env['LLM_TEST_KEY'] = LLM_TEST_KEY;
// Retries wait 20 ms, not a second, unless the endpoint says how long.
process.env['CLEVERAGENTS_LLM_RETRY_BASE_MS'] = '20';

const FIXTURE = fileURLToPath(new URL('../support/mcp-fixture-server.ts', import.meta.url));

type Body = { messages: Array<{ role: string; content?: unknown; tool_call_id?: string }> };
const lastBody = (f: FakeLlm): Body => f.generations.at(-1)?.body as Body;
const toolResults = (b: Body): string[] => b.messages.filter((m) => m.role === 'tool').map((m) => String(m.content));

describe('chat with an LLM actor, in depth', () => {
  let h: Harness;
  let client: A2AClient;
  let fake: FakeLlm;
  let work: string;
  let repo: string;
  let n = 0;

  /** Registers an actor on the fake (tools, window… as given) and returns its name. */
  async function actor(extra: Record<string, unknown> = {}): Promise<string> {
    const name = `local/a${++n}`;
    await addActor(client, {
      name,
      provider: 'openai-compatible',
      model: 'fake-model',
      baseUrl: fake.url,
      apiKeyEnv: 'LLM_TEST_KEY',
      maxRetries: 1,
      ...extra,
    });
    return name;
  }

  async function turn(actorName: string, text: string, project?: string, ...replies: FakeReply[]): Promise<Turn> {
    fake.push(...replies);
    const s = await client.call(sessionCreate, { actor: actorName, ...(project ? { project } : {}) });
    return streamTurn(client, text, { contextId: s.id });
  }

  before(async () => {
    h = await startHarness('memory');
    client = h.client;
    fake = await startFakeOpenAI({ expectKey: LLM_TEST_KEY });
    work = tempDir('ca-llm-depth-');
    repo = makeRepo(join(work, 'repo'));
    writeFileSync(join(repo, 'notes.txt'), 'the answer is 42\n');
    await client.call(resourceRegistry.add, {
      definition: { name: 'local/depth', type: 'git-checkout', path: repo },
    });
    await client.call(projectRegistry.add, {
      definition: { name: 'local/depth', resources: ['local/depth'] },
    });
    await client.call(automationProfileRegistry.add, {
      definition: {
        name: 'local/no-writes',
        default: 'allow',
        rules: [{ tool: 'builtin/write-file', decision: 'deny', reason: 'read-only chat' }],
      },
    });
    await client.call(projectRegistry.add, {
      definition: {
        name: 'local/depth-locked',
        resources: ['local/depth'],
        settings: { automationProfile: 'local/no-writes' },
      },
    });
    await client.call(projectRegistry.add, {
      definition: {
        name: 'local/depth-trusted',
        resources: ['local/depth'],
        settings: { automationProfile: 'trusted' },
      },
    });
  });

  after(async () => {
    await h?.close();
    await fake?.close();
    rmSync(work, { recursive: true, force: true });
  });

  describe('failures a user meets', () => {
    it('a session cannot name a project or skill that is not there, and none is created', async () => {
      const a = await actor();
      const before = (await client.call(sessionList, {})).totalSize;
      await rpcError(client.call(sessionCreate, { actor: a, project: 'local/nope' }), -32001, 'ResourceNotFoundError');
      await rpcError(client.call(sessionCreate, { actor: a, skills: ['local/nope'] }), -32001, 'ResourceNotFoundError');
      assert.equal((await client.call(sessionList, {})).totalSize, before);
    });

    it('a missing key fails before any request, naming the variable', async () => {
      const a = await actor({ apiKeyEnv: 'LLM_KEY_NOT_SET' });
      const sent = fake.generations.length;
      const t = await turn(a, 'hi');
      assert.equal(t.task.status.state, 'TASK_STATE_FAILED');
      assert.match(statusText(t.task), /No API key for local\/a\d+: LLM_KEY_NOT_SET is not set\. Set LLM_KEY_NOT_SET/);
      // The harness's agent runs in local mode: there is no server process to set it in.
      assert.match(statusText(t.task), /Set LLM_KEY_NOT_SET in the environment you run `agents` in, then send again\./);
      assert.equal(fake.generations.length, sent, 'nothing was sent');
    });

    it('an unknown model (404) says which and where to look', async () => {
      const t = await turn(await actor(), 'hi', undefined, {
        error: { status: 404, code: 'model_not_found', message: 'The model `fake-model` does not exist' },
      });
      assert.equal(t.task.status.state, 'TASK_STATE_FAILED');
      assert.match(statusText(t.task), /fake-model/);
      assert.match(statusText(t.task), /agents actor show/);
    });

    it('a rate limit (429) is retried after its Retry-After, then the answer comes', async () => {
      const sent = fake.generations.length;
      const t = await turn(
        await actor(),
        'hi',
        undefined,
        { error: { status: 429, code: 'rate_limit_exceeded', message: 'slow down', headers: { 'retry-after': '1' } } },
        { text: ['made it'] },
      );
      assert.equal(t.task.status.state, 'TASK_STATE_COMPLETED', statusText(t.task));
      assert.equal(t.chunks.join(''), 'made it');
      assert.equal(fake.generations.length - sent, 2);
    });

    it('a provider 5xx is retried, then fails with the status', async () => {
      const sent = fake.generations.length;
      const e = { error: { status: 503, message: 'upstream down' } };
      const t = await turn(await actor(), 'hi', undefined, e, e);
      assert.equal(t.task.status.state, 'TASK_STATE_FAILED');
      assert.match(statusText(t.task), /503/);
      assert.equal(fake.generations.length - sent, 2, 'maxRetries 1: two requests');
    });

    it('an endpoint nobody listens on is a network failure naming it', async () => {
      const url = `http://127.0.0.1:${await freePort()}/v1`;
      const a = await actor({ baseUrl: url, maxRetries: 0 });
      const t = await turn(a, 'hi');
      assert.equal(t.task.status.state, 'TASK_STATE_FAILED');
      assert.match(statusText(t.task), /cannot reach/);
      assert.ok(statusText(t.task).includes(url), statusText(t.task));
    });

    it('an endpoint that never answers times out after timeoutSeconds', async () => {
      const t = await turn(await actor({ timeoutSeconds: 0.5, maxRetries: 0 }), 'hi', undefined, { hang: true });
      assert.equal(t.task.status.state, 'TASK_STATE_FAILED');
      assert.match(statusText(t.task), /time/i);
    });

    it("a turn that cannot fit the actor's window fails before sending, with what to change", async () => {
      const a = await actor({ contextWindow: 256, maxTokens: 64 });
      const sent = fake.generations.length;
      const t = await turn(a, 'word '.repeat(2000));
      assert.equal(t.task.status.state, 'TASK_STATE_FAILED');
      assert.match(statusText(t.task), /context window/);
      assert.match(statusText(t.task), /contextWindow 256/);
      assert.equal(fake.generations.length, sent);
    });

    it("the provider's own context-length refusal is reported as such", async () => {
      const t = await turn(await actor(), 'hi', undefined, {
        error: {
          status: 400,
          code: 'context_length_exceeded',
          message: "This model's maximum context length is 8192 tokens.",
        },
      });
      assert.equal(t.task.status.state, 'TASK_STATE_FAILED');
      assert.match(statusText(t.task), /context/i);
    });

    it('at the tool-step limit the model gets one last step without tools to say what is left', async () => {
      const a = await actor({ maxToolSteps: 2, tools: ['builtin/read-file'] });
      const call = { toolCalls: [{ name: 'builtin__read-file', arguments: '{"path":"notes.txt"}' }] };
      const t = await turn(a, 'loop', 'local/depth', call, call, { text: ['I read notes.txt twice; left: nothing.'] });
      assert.equal(t.task.status.state, 'TASK_STATE_COMPLETED', statusText(t.task));
      assert.match(statusText(t.task), /used its 2 tool steps \(maxToolSteps\)/);
      const last = lastBody(fake) as { tool_choice?: unknown; messages?: Array<{ content?: unknown }> };
      assert.equal(last.tool_choice, 'none', 'the last step offers no tool');
      assert.match(JSON.stringify(last.messages?.at(-1)), /Without calling any tool/);
      assert.match(JSON.stringify(t.task.artifacts), /left: nothing/);
    });
  });

  describe('the tool loop', () => {
    it('a malformed call, a call against the schema and an unknown tool go back to the model', async () => {
      const a = await actor({ tools: ['builtin/read-file'] });
      const t = await turn(
        a,
        'read',
        'local/depth',
        {
          toolCalls: [
            { id: 'c1', name: 'builtin__read-file', arguments: '{"path": "notes.txt"' },
            { id: 'c2', name: 'builtin__read-file', arguments: '{"path": 5}' },
            { id: 'c3', name: 'no_such_tool', arguments: '{}' },
          ],
        },
        { text: ['sorry'] },
      );
      assert.equal(t.task.status.state, 'TASK_STATE_COMPLETED', statusText(t.task));
      const results = toolResults(lastBody(fake));
      assert.equal(results.length, 3);
      assert.match(results[0] ?? '', /not valid JSON/);
      assert.match(results[1] ?? '', /\/path must be string/);
      assert.match(results[2] ?? '', /no tool named no_such_tool/);
    });

    it("file tools stay inside the project's resource: a path outside is refused, nothing is read", async () => {
      const a = await actor({ tools: ['builtin/read-file'] });
      const t = await turn(
        a,
        'read',
        'local/depth',
        { toolCalls: [{ name: 'builtin__read-file', arguments: '{"path":"../../../../etc/passwd"}' }] },
        { text: ['refused'] },
      );
      assert.equal(t.task.status.state, 'TASK_STATE_COMPLETED');
      const result = toolResults(lastBody(fake))[0] ?? '';
      assert.match(result, /escapes the sandbox/);
      assert.doesNotMatch(result, /root:/);
      assert.equal(toolCalls(t.task)[0]?.['ok'], false);
    });

    it('keeps asking the model after bad calls only three steps in a row, then fails', async () => {
      const a = await actor({ tools: ['builtin/read-file'] });
      const bad = { toolCalls: [{ name: 'builtin__read-file', arguments: 'not json' }] };
      const t = await turn(a, 'read', 'local/depth', bad, bad, bad);
      assert.equal(t.task.status.state, 'TASK_STATE_FAILED');
      assert.match(statusText(t.task), /invalid tool calls 3 steps in a row/);
    });

    it('file tools need a project: without one they are not offered, and the model is told', async () => {
      const a = await actor({ tools: ['builtin/read-file'] });
      const t = await turn(a, 'read', undefined, { text: ['no tools'] });
      assert.equal(t.task.status.state, 'TASK_STATE_COMPLETED');
      const body = fake.generations.at(-1)?.body as { tools?: unknown[]; messages: Array<{ content: string }> };
      assert.equal(body.tools?.length ?? 0, 0);
      assert.match(body.messages[0]?.content ?? '', /bind the session to a project/);
      assert.deepEqual(t.task.metadata?.['toolProblems'], [
        "tool builtin/read-file works on a project's files: bind the session to a project (--project) to use it",
      ]);
    });

    it('a tool that writes asks first; yes runs it', async () => {
      const a = await actor({ tools: ['builtin/write-file'] });
      const t = await turn(a, 'write', 'local/depth', {
        toolCalls: [{ name: 'builtin__write-file', arguments: '{"path":"yes.txt","content":"approved\\n"}' }],
      });
      assert.equal(t.task.status.state, 'TASK_STATE_INPUT_REQUIRED', statusText(t.task));
      const data = t.task.status.message?.parts.find((p) => p.data !== undefined)?.data as {
        approvalRequest: { tool: string; args: unknown; policy: { profile: string } };
      };
      assert.equal(data.approvalRequest.tool, 'builtin/write-file');
      assert.deepEqual(data.approvalRequest.args, { path: 'yes.txt', content: 'approved\n' });
      assert.equal(data.approvalRequest.policy.profile, 'builtin/manual');
      assert.equal(existsSync(join(repo, 'yes.txt')), false, 'nothing written before the answer');
      fake.push({ text: ['written'] });
      const answered = await streamTurn(client, 'yes', { contextId: t.task.contextId, taskId: t.task.id });
      assert.equal(answered.task.status.state, 'TASK_STATE_COMPLETED', statusText(answered.task));
      assert.equal(readFileSync(join(repo, 'yes.txt'), 'utf8'), 'approved\n');
      assert.match(toolResults(lastBody(fake))[0] ?? '', /yes\.txt/);
      assert.equal(toolCalls(answered.task).at(-1)?.['state'], 'done');
    });

    it('a tool that writes asks first; no (with guidance) does not run it, and the model hears why', async () => {
      const a = await actor({ tools: ['builtin/write-file'] });
      const t = await turn(a, 'write', 'local/depth', {
        toolCalls: [{ name: 'builtin__write-file', arguments: '{"path":"no.txt","content":"x"}' }],
      });
      assert.equal(t.task.status.state, 'TASK_STATE_INPUT_REQUIRED');
      fake.push({ text: ['ok, I will not'] });
      const answered = await streamTurn(client, 'use a name under tmp/ instead', {
        contextId: t.task.contextId,
        taskId: t.task.id,
      });
      assert.equal(answered.task.status.state, 'TASK_STATE_COMPLETED');
      assert.equal(existsSync(join(repo, 'no.txt')), false);
      assert.match(toolResults(lastBody(fake))[0] ?? '', /declined.*They said: use a name under tmp\/ instead/);
      assert.equal(toolCalls(answered.task).at(-1)?.['state'], 'declined');
    });

    it("the project's profile decides: a deny is told to the model, a trusted project runs the write at once", async () => {
      const a = await actor({ tools: ['builtin/write-file'] });
      const call = { toolCalls: [{ name: 'builtin__write-file', arguments: '{"path":"p.txt","content":"p"}' }] };
      const denied = await turn(a, 'write', 'local/depth-locked', call, { text: ['denied'] });
      assert.equal(denied.task.status.state, 'TASK_STATE_COMPLETED');
      assert.match(toolResults(lastBody(fake))[0] ?? '', /Not allowed: rule 1 of local\/no-writes/);
      assert.equal(existsSync(join(repo, 'p.txt')), false);
      const trusted = await turn(a, 'write', 'local/depth-trusted', call, { text: ['done'] });
      assert.equal(trusted.task.status.state, 'TASK_STATE_COMPLETED', statusText(trusted.task));
      assert.equal(readFileSync(join(repo, 'p.txt'), 'utf8'), 'p');
    });

    it('older turns are left out, oldest first, when the history outgrows the window', async () => {
      // Without compaction (which would summarise them first: test/contract/compaction.test.ts).
      const a = await actor({ contextWindow: 600, maxTokens: 100, compaction: { enabled: false } });
      const s = await client.call(sessionCreate, { actor: a });
      for (let i = 0; i < 6; i++) {
        fake.push({ text: [`answer ${i} `.repeat(20)] });
        const turn = await streamTurn(client, `question ${i} `.repeat(20), { contextId: s.id });
        assert.equal(turn.task.status.state, 'TASK_STATE_COMPLETED', statusText(turn.task));
      }
      const body = lastBody(fake);
      const users = body.messages.filter((m) => m.role === 'user').map((m) => String(m.content));
      assert.ok(users.length < 6, `some turns were dropped (${users.length} kept)`);
      assert.match(users.at(-1) ?? '', /question 5/, 'the current message is always sent');
      assert.doesNotMatch(users.join(' '), /question 0/, 'the oldest went first');
    });
  });

  describe('MCP tools from a real MCP server', () => {
    let a: string;
    before(async () => {
      await client.call(skillRegistry.add, {
        definition: {
          name: 'local/fx',
          instructions: 'Use the fixture tools.',
          mcpServers: [
            {
              name: 'fx',
              command: process.execPath,
              args: [FIXTURE],
              env: { FIXTURE_DIR: work },
              callTimeoutSeconds: 2,
            },
          ],
        },
      });
      a = await actor({ skills: ['local/fx'] });
    });

    it('skill show lists what the server offers, with schemas', async () => {
      const shown = await client.call(skillRegistry.show, { name: 'local/fx' });
      const echo = shown.derived.mcpTools.find((t) => t.name === 'mcp:fx/echo');
      assert.ok(echo, JSON.stringify(shown.derived));
      assert.equal(echo.readOnly, true);
      assert.deepEqual(Object.keys((echo.inputSchema['properties'] as object) ?? {}), ['text']);
      assert.deepEqual(shown.derived.mcpProblems, []);
    });

    it('the model is offered the MCP tools and a read-only one runs at once', async () => {
      const t = await turn(
        a,
        'echo',
        undefined,
        { toolCalls: [{ name: 'mcp_fx__echo', arguments: '{"text":"ping"}' }] },
        { text: ['pong'] },
      );
      assert.equal(t.task.status.state, 'TASK_STATE_COMPLETED', statusText(t.task));
      const offered = (fake.generations.at(-2)?.body as { tools: Array<{ function: { name: string } }> }).tools;
      assert.ok(offered.some((x) => x.function.name === 'mcp_fx__write_note'));
      assert.equal(toolCalls(t.task)[0]?.['tool'], 'mcp:fx/echo');
      assert.equal(toolResults(lastBody(fake))[0], 'ping');
      assert.match(String((lastBody(fake).messages[0] as { content: string }).content), /Use the fixture tools/);
    });

    it('an MCP tool that is not read-only asks first', async () => {
      const t = await turn(a, 'note', undefined, {
        toolCalls: [{ name: 'mcp_fx__write_note', arguments: '{"name":"n.txt","text":"hello"}' }],
      });
      assert.equal(t.task.status.state, 'TASK_STATE_INPUT_REQUIRED');
      fake.push({ text: ['noted'] });
      const done = await streamTurn(client, 'yes', { contextId: t.task.contextId, taskId: t.task.id });
      assert.equal(done.task.status.state, 'TASK_STATE_COMPLETED', statusText(done.task));
      assert.equal(readFileSync(join(work, 'n.txt'), 'utf8'), 'hello');
    });

    it('a server that crashes is a tool error, and the next call starts it again', async () => {
      // Tools that are not read-only run without asking in a trusted project.
      const crashed = await turn(
        a,
        'crash',
        'local/depth-trusted',
        { toolCalls: [{ name: 'mcp_fx__crash', arguments: '{}' }] },
        { text: ['it crashed'] },
      );
      assert.equal(crashed.task.status.state, 'TASK_STATE_COMPLETED');
      assert.match(toolResults(lastBody(fake))[0] ?? '', /exited/);
      const again = await turn(
        a,
        'echo',
        undefined,
        { toolCalls: [{ name: 'mcp_fx__echo', arguments: '{"text":"back"}' }] },
        { text: ['ok'] },
      );
      assert.equal(again.task.status.state, 'TASK_STATE_COMPLETED');
      assert.equal(toolResults(lastBody(fake))[0], 'back');
    });

    it('CancelTask ends a turn whose MCP call is running, and the server goes on serving', async () => {
      fake.push({ toolCalls: [{ name: 'mcp_fx__slow', arguments: '{"ms":60000}' }] });
      const s = await client.call(sessionCreate, { actor: a, project: 'local/depth-trusted' });
      const t = await streamTurn(client, 'slow', { contextId: s.id }, async (ev) => {
        if (!('artifactUpdate' in ev)) return;
        const data = ev.artifactUpdate.artifact.parts[0]?.data as { state?: string } | undefined;
        if (data?.state === 'running') await client.call(cancelTask, { id: ev.artifactUpdate.taskId });
      });
      assert.equal(t.task.status.state, 'TASK_STATE_CANCELED');
      // The call never finished (the hub's own tests show the server is told); the server still answers.
      const final = await client.call(getTask, { id: t.task.id });
      assert.notEqual(toolCalls(final)[0]?.['state'], 'done');
      const after = await turn(
        a,
        'echo',
        undefined,
        { toolCalls: [{ name: 'mcp_fx__echo', arguments: '{"text":"still here"}' }] },
        { text: ['ok'] },
      );
      assert.equal(after.task.status.state, 'TASK_STATE_COMPLETED');
      assert.equal(toolResults(lastBody(fake))[0], 'still here');
    });

    it('a call past callTimeoutSeconds is a tool error, not a hang', async () => {
      const t = await turn(
        a,
        'slow',
        'local/depth-trusted',
        { toolCalls: [{ name: 'mcp_fx__slow', arguments: '{"ms":60000}' }] },
        { text: ['too slow'] },
      );
      assert.equal(t.task.status.state, 'TASK_STATE_COMPLETED');
      assert.match(toolResults(lastBody(fake))[0] ?? '', /timed out after 2 s/);
      const final = await client.call(getTask, { id: t.task.id });
      assert.equal(toolCalls(final)[0]?.['ok'], false);
    });
  });
});
