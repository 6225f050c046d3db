/**
 * The chat's session slash commands against a fake client: which method each calls with what, what
 * it prints, the session it goes on with, and that an agent's error reaches the dispatcher.
 */
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import { SESSION_SLASH } from '../../../../../src/presentation/cli/chat/session-slash.ts';
import type { SlashContext } from '../../../../../src/presentation/cli/chat/slash-types.ts';
import { Ui } from '../../../../../src/presentation/cli/render/ui.ts';
import type { RunContext } from '../../../../../src/presentation/cli/runner.ts';
import {
  A2AClient,
  A2AClientError,
  type ClientTransport,
  type Session,
} from '../../../../../src/protocol/client/index.ts';

const SESSION: Session = {
  id: 's1',
  owner: 'local',
  actor: 'builtin/echo',
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
  taskCount: 2,
};

const PREVIEW = {
  sessionId: 's1',
  actor: 'local/coder',
  model: { provider: 'openai-compatible', model: 'm', contextWindow: 8000, reserve: 500 },
  system: { tokens: 120, instructions: 20, compaction: 0, project: 100 },
  history: { turns: 3, compacted: 0, kept: 2, dropped: 1, messages: 4, tokens: 300, compactionDue: 0 },
  project: { name: 'local/shop', mode: 'map', tokens: 100, map: { files: 12, shown: 9 } },
  tools: [
    { name: 'builtin/read', description: 'Read a file.', readOnly: true },
    { name: 'builtin/edit', description: 'Edit a file.', readOnly: false },
  ],
  toolTokens: 80,
  problems: [],
  totals: { tokens: 504, room: 7500, window: 8000 },
};

const DIFF = {
  sessionId: 's1',
  files: [
    {
      oldPath: 'a.txt',
      newPath: 'a.txt',
      status: 'modified',
      turns: [1],
      changedOutside: true,
      hunks: [
        {
          oldStart: 1,
          oldLines: 1,
          newStart: 1,
          newLines: 1,
          lines: [
            { kind: '-', text: 'old' },
            { kind: '+', text: 'new' },
          ],
        },
      ],
    },
  ],
  unified: '',
};

/** A client whose agent answers each method from `answers` (a function may throw), recording the calls. */
function fakeClient(answers: Record<string, unknown>): { client: A2AClient; calls: Array<[string, unknown]> } {
  const calls: Array<[string, unknown]> = [];
  const transport: ClientTransport = {
    kind: 'memory',
    request: (method, params) => {
      calls.push([method, params]);
      const a = answers[method];
      if (a === undefined) return Promise.reject(new Error(`unexpected call of ${method}`));
      return Promise.resolve(typeof a === 'function' ? (a as (p: unknown) => unknown)(params) : a);
    },
    stream: () => {
      throw new Error('no streams here');
    },
    agentCard: () => Promise.resolve({}),
    close: () => Promise.resolve(),
  };
  return { client: new A2AClient(transport), calls };
}

function context(client: A2AClient, format: 'rich' | 'plain' = 'plain'): { c: SlashContext; out: () => string } {
  const stdout = new PassThrough();
  let written = '';
  stdout.on('data', (d: Buffer) => (written += d.toString()));
  const ui = new Ui(format, { stdout, stderr: new PassThrough(), stdin: new PassThrough(), env: {} }, true);
  const ctx = { ui, signal: new AbortController().signal } as unknown as RunContext;
  return { c: { ctx, client, session: SESSION }, out: () => written };
}

const run = (name: string, c: SlashContext, args: string[] = []) => {
  const cmd = SESSION_SLASH[name];
  assert.ok(cmd, `/${name} exists`);
  return cmd.run(c, args);
};

describe('session slash commands', () => {
  it('/model <name> switches the next turns (a bare name is local/) and goes on with the updated session', async () => {
    const updated = { ...SESSION, actor: 'local/coder' };
    const { client, calls } = fakeClient({ '_cleveragents/session/update': updated });
    const { c, out } = context(client);
    const r = await run('model', c, ['coder']);
    assert.deepEqual(calls, [['_cleveragents/session/update', { sessionId: 's1', actor: 'local/coder' }]]);
    assert.deepEqual(r.session, updated);
    assert.equal(out(), 'next turns: local/coder\n');
  });

  it('/model without a name shows the current actor and the ones the caller can use', async () => {
    const items = ['builtin/echo', 'local/coder'].map((name) => ({ name }));
    const { client, calls } = fakeClient({ '_cleveragents/registry/actors/list': { items, totalSize: 2 } });
    const { c, out } = context(client);
    const r = await run('model', c);
    assert.equal(calls[0]?.[0], '_cleveragents/registry/actors/list');
    assert.equal(r.session, undefined);
    assert.equal(out(), 'actor\tbuiltin/echo\navailable\tbuiltin/echo\navailable\tlocal/coder\n');
  });

  it("/model with an actor the agent refuses throws the agent's error for the dispatcher, the session unchanged", async () => {
    const refusal = new A2AClientError({
      code: -32001,
      message: 'No actor named local/nope',
      data: { type: 'ResourceNotFoundError', hint: 'available actors: builtin/echo' },
    });
    const { client } = fakeClient({
      '_cleveragents/session/update': () => {
        throw refusal;
      },
    });
    await assert.rejects(run('model', context(client).c, ['nope']), refusal);
  });

  it('/diff [turn] asks for the session (or one turn) and prints the diff, the outside change marked', async () => {
    const { client, calls } = fakeClient({ '_cleveragents/session/diff': DIFF });
    const { c, out } = context(client);
    await run('diff', c, ['2']);
    assert.deepEqual(calls, [['_cleveragents/session/diff', { sessionId: 's1', turn: 2 }]]);
    assert.equal(
      out(),
      '# changed outside the agent since: a.txt\ndiff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-old\n+new\n',
    );
    const wrong = context(client);
    assert.deepEqual(await run('diff', wrong.c, ['two']), {});
    assert.equal(calls.length, 1, 'a wrong argument calls nothing');
  });

  it('/diff says when nothing changed', async () => {
    const { client } = fakeClient({ '_cleveragents/session/diff': { sessionId: 's1', files: [], unified: '' } });
    const { c, out } = context(client, 'rich');
    await run('diff', c);
    assert.equal(out(), 'No file changes in its turns of session s1\n');
  });

  it("/tools and /context read the next turn's preview", async () => {
    const { client, calls } = fakeClient({ '_cleveragents/session/context': PREVIEW });
    const tools = context(client, 'rich');
    await run('tools', tools.c);
    assert.match(tools.out(), /Tools of local\/coder \(2 tools, 80 tokens\)/);
    assert.match(tools.out(), /builtin\/edit {2}Edit a file\. \(may write\)/);
    const ctx = context(client, 'rich');
    const r = await run('context', ctx.c);
    assert.deepEqual(r.data, PREVIEW);
    assert.match(ctx.out(), /history {8}2 of 3 earlier turns kept, 300 tokens \(1 left out to fit\)/);
    assert.match(ctx.out(), /project {8}local\/shop: a map of 9 of 12 files, 100 tokens/);
    assert.match(ctx.out(), /total {10}504 of 7500 tokens \(7%; window 8000, 500 kept for the answer\)/);
    assert.deepEqual(
      calls.map(([m, p]) => [m, p]),
      [
        ['_cleveragents/session/context', { sessionId: 's1' }],
        ['_cleveragents/session/context', { sessionId: 's1' }],
      ],
    );
  });
});
