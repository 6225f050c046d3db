/** The chat's slash dispatcher: parsing a line, the commands it knows, and the answer to one it does not. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { nearest, parseChatLine, SlashDispatcher } from '../../../../../src/presentation/cli/chat/slash.ts';
import type { SlashCommand } from '../../../../../src/presentation/cli/chat/slash-types.ts';
import { fakeClient, fakeRun, SESSION } from './chat-fakes.ts';

const model: SlashCommand = {
  usage: '/model <actor>',
  summary: 'switch actor',
  run: (c, args) => Promise.resolve({ session: { ...c.session, actor: args[0] ?? '' }, data: { actor: args[0] } }),
};

describe('parseChatLine', () => {
  it('reads a command and its arguments', () => {
    assert.deepEqual(parseChatLine('/undo 2 --force'), {
      kind: 'slash',
      name: 'undo',
      args: ['2', '--force'],
      line: '/undo 2 --force',
    });
  });
  it('sends a line starting with // with one literal /', () => {
    assert.deepEqual(parseChatLine('//etc/hosts is odd'), { kind: 'message', text: '/etc/hosts is odd' });
  });
  it('sends anything else as typed', () => {
    assert.deepEqual(parseChatLine('fix a/b'), { kind: 'message', text: 'fix a/b' });
  });
});

describe('SlashDispatcher', () => {
  it('works with no session commands and lists its own in /help, with usage and summary', async () => {
    const d = new SlashDispatcher({});
    assert.deepEqual(d.names(), ['clear', 'compact', 'cost', 'exit', 'help', 'quit', 'undo']);
    const { ctx, out } = fakeRun('plain');
    const { client } = fakeClient({});
    const done = await d.dispatch({ ctx, client, session: SESSION }, 'help', []);
    assert.equal(done.kind, 'ran');
    assert.match(out(), /^\/undo \[turn\] \[--force\]\tput back the files/m);
    assert.match(out(), /^\/compact \[keep\]\t/m);
    assert.match(out(), /^\/exit\tleave the chat/m);
  });

  it('merges the session commands: /help lists them and they run', async () => {
    const d = new SlashDispatcher({ model });
    const { ctx, out } = fakeRun('plain');
    const { client } = fakeClient({});
    await d.dispatch({ ctx, client, session: SESSION }, 'help', []);
    assert.match(out(), /^\/model <actor>\tswitch actor$/m);
    const done = await d.dispatch({ ctx, client, session: SESSION }, 'model', ['local/other']);
    assert.deepEqual(done, {
      kind: 'ran',
      name: 'model',
      result: { session: { ...SESSION, actor: 'local/other' }, data: { actor: 'local/other' } },
    });
  });

  it('keeps its own /undo when a session command has the same name', async () => {
    const d = new SlashDispatcher({ undo: model });
    assert.equal(d.describe('undo')?.usage, '/undo [turn] [--force]');
  });

  it('answers /exit and /quit by leaving', async () => {
    const d = new SlashDispatcher({});
    const { ctx } = fakeRun();
    const { client } = fakeClient({});
    assert.deepEqual(await d.dispatch({ ctx, client, session: SESSION }, 'exit', []), { kind: 'exit' });
    assert.deepEqual(await d.dispatch({ ctx, client, session: SESSION }, 'quit', []), { kind: 'exit' });
  });

  it('answers an unknown command with the nearest name and /help', async () => {
    const d = new SlashDispatcher({});
    const { ctx } = fakeRun();
    const { client, calls } = fakeClient({});
    const done = await d.dispatch({ ctx, client, session: SESSION }, 'udno', []);
    assert.deepEqual(done, { kind: 'unknown', name: 'udno', suggestion: 'undo' });
    assert.equal(
      SlashDispatcher.unknownText({ name: 'udno', suggestion: 'undo' }),
      'unknown command /udno; did you mean /undo? /help lists them',
    );
    assert.equal(
      SlashDispatcher.unknownText({ name: 'zzzzzz', suggestion: undefined }),
      'unknown command /zzzzzz; /help lists them',
    );
    assert.equal(calls.length, 0);
  });

  it('completes command names after /', () => {
    const d = new SlashDispatcher({});
    assert.deepEqual(d.complete('/c'), [['/clear', '/compact', '/cost'], '/c']);
    assert.deepEqual(d.complete('/q'), [['/quit'], '/q']);
  });
});

describe('nearest', () => {
  it('takes a prefix or a name within two edits, else none', () => {
    assert.equal(nearest('comp', ['compact', 'cost']), 'compact');
    assert.equal(nearest('clera', ['clear', 'cost']), 'clear');
    assert.equal(nearest('banana', ['clear', 'cost']), undefined);
  });
});
