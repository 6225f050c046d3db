/** The stdio server under hostile input: garbage lines, missing handshake, bad versions, cancellation, EOF. */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { tempDir } from '../support/harness.ts';
import { RawStdioAgent as RawAgent } from '../support/raw-agent.ts';

describe('hostile input over stdio', () => {
  let dir: string;
  let agent: RawAgent;
  before(() => {
    dir = tempDir();
    agent = new RawAgent(dir, ['--default-actor', 'builtin/conformance']);
  });
  after(() => {
    agent.child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('requires the initialize handshake first', async () => {
    agent.send('{"jsonrpc":"2.0","id":"early","method":"ListTasks","params":{}}');
    const r = await agent.waitFor((m) => m.id === 'early');
    assert.equal(r.error.code, -32600);
    assert.match(r.error.message, /initialize/);
  });

  it('refuses an unsupported protocol version in the handshake', async () => {
    agent.send('{"jsonrpc":"2.0","id":"v9","method":"initialize","params":{"protocolVersion":"9.9"}}');
    const r = await agent.waitFor((m) => m.id === 'v9');
    assert.equal(r.error.code, -32009);
    assert.equal(r.error.data[0].metadata.type, 'VersionNotSupportedError');
  });

  it('answers garbage with -32700 and keeps serving', async () => {
    agent.send('this is not json');
    agent.send('{"unterminated": ');
    await agent.waitFor((m) => m.error?.code === -32700);
    agent.send(
      '{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"1.0","clientInfo":{"name":"raw"}}}',
    );
    const init = await agent.waitFor((m) => m.id === 'init');
    assert.equal(init.result.protocolVersion, '1.0');
    assert.equal(init.result.agentCard.name, 'CleverAgents');
  });

  it('answers envelope errors, unknown methods and bad params', async () => {
    agent.send('[1,2,3]');
    agent.send('{"jsonrpc":"2.0","id":"m","method":"Nope"}');
    agent.send('{"jsonrpc":"2.0","id":"p","method":"GetTask","params":{"historyLength":"ten"}}');
    agent.send('{"id":"e","method":"GetTask"}');
    assert.equal((await agent.waitFor((m) => m.id === 'm')).error.code, -32601);
    assert.equal((await agent.waitFor((m) => m.id === 'p')).error.code, -32602);
    assert.equal((await agent.waitFor((m) => m.id === 'e')).error.code, -32600);
    assert.ok(
      agent.lines.some((m) => m.id === null && m.error?.code === -32600),
      'batch refused',
    );
  });

  it('streams events as notifications, then one final response; $/cancelRequest stops a stream', async () => {
    agent.send(
      '{"jsonrpc":"2.0","id":"send","method":"SendMessage","params":{"message":{"messageId":"w","role":"ROLE_USER","parts":[{"text":"stay"}]}}}',
    );
    const sent = await agent.waitFor((m) => m.id === 'send');
    const taskId = sent.result.task.id;
    agent.send(JSON.stringify({ jsonrpc: '2.0', id: 'sub', method: 'SubscribeToTask', params: { id: taskId } }));
    const first = await agent.waitFor((m) => m.method === '_cleveragents/stream/event' && m.params.requestId === 'sub');
    assert.equal(first.params.event.task.id, taskId);
    assert.equal(typeof first.params.seq, 'number');
    agent.send('{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"sub"}}');
    const final = await agent.waitFor((m) => m.id === 'sub');
    assert.ok(final.error, 'a cancelled stream ends with an error response');
    // The task itself is untouched by cancelling the request.
    agent.send(JSON.stringify({ jsonrpc: '2.0', id: 'get', method: 'GetTask', params: { id: taskId } }));
    assert.equal((await agent.waitFor((m) => m.id === 'get')).result.status.state, 'TASK_STATE_WORKING');
  });

  it('writes nothing but JSON-RPC to stdout', () => {
    assert.ok(agent.rawLines.length > 0, 'the agent wrote its answers');
    for (const line of agent.rawLines) {
      const m = JSON.parse(line);
      assert.equal(m.jsonrpc, '2.0');
    }
  });

  it('exits when stdin closes', async () => {
    const exited = new Promise<number | null>((r) => agent.child.on('exit', (code) => r(code)));
    agent.child.stdin.end();
    const code = await Promise.race([exited, new Promise<string>((r) => setTimeout(() => r('timeout'), 8000))]);
    assert.equal(code, 0);
  });
});
