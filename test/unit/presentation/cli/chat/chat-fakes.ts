/** A chat's run context on PassThrough streams, and a client that answers from a table of methods. */
import { PassThrough } from 'node:stream';
import type { A2AClient, Session } from '../../../../../src/protocol/client/index.ts';
import { Ui } from '../../../../../src/presentation/cli/render/ui.ts';
import type { RunContext } from '../../../../../src/presentation/cli/runner.ts';

export function fakeRun(format: 'rich' | 'plain' = 'plain'): { ctx: RunContext; out: () => string; err: () => string } {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let o = '';
  let e = '';
  stdout.on('data', (c: Buffer) => (o += c.toString()));
  stderr.on('data', (c: Buffer) => (e += c.toString()));
  const io = { stdout, stderr, stdin: new PassThrough(), env: {} };
  const ui = new Ui(format, io, true);
  const ctx = { ui, io, signal: new AbortController().signal } as unknown as RunContext;
  return { ctx, out: () => o, err: () => e };
}

/** Records each call (method name and params) and answers with `answers[name]`. */
export function fakeClient(answers: Record<string, (params: unknown) => unknown>): {
  client: A2AClient;
  calls: { method: string; params: unknown }[];
} {
  const calls: { method: string; params: unknown }[] = [];
  const client = {
    call: (contract: { name: string }, params: unknown) => {
      calls.push({ method: contract.name, params });
      const answer = answers[contract.name];
      if (!answer) return Promise.reject(new Error(`unexpected call ${contract.name}`));
      return Promise.resolve(answer(params));
    },
  } as unknown as A2AClient;
  return { client, calls };
}

export const SESSION: Session = {
  id: 'sess-1',
  owner: 'me',
  actor: 'local/coder',
  project: 'web',
  skills: ['review'],
  context: 'full',
  createdAt: '2026-01-01T00:00:00Z',
  updatedAt: '2026-01-01T00:00:00Z',
  taskCount: 2,
};
