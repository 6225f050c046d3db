import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import fs from 'node:fs';
import path from 'node:path';
import type { Worker } from 'node:worker_threads';
import type { ToolCallResult } from '../../../../src/application/index.ts';
import { BuiltinToolRunner, CommandConfinement } from '../../../../src/infrastructure/index.ts';
import { eventually } from '../../../support/eventually.ts';
import { rmrf, tmpDir, write } from '../fixtures/repos.ts';
import { builtin, dirSandbox } from './coding-tools.fixture.ts';

/** Forty `a`s and a `b`: `(a+)+$` backtracks through 2^40 ways of splitting them before it fails. */
const CATASTROPHIC_LINE = `${'a'.repeat(40)}b`;
const EXPONENTIAL = '(a+)+$';
const ADVICE = 'simplify it (nested quantifiers like (a+)+ backtrack exponentially)';

describe('regex tools under a deadline (the matching runs in a worker thread)', () => {
  let dir: string;
  const runner = new BuiltinToolRunner({ confinement: CommandConfinement.unconfined() });
  const call = (
    name: string,
    args: Record<string, unknown>,
    timeoutMs: number,
    signal = new AbortController().signal,
  ): Promise<ToolCallResult> => runner.run({ tool: builtin(name), args, sandbox: dirSandbox(dir), signal, timeoutMs });

  // Every matching worker started in this file, until it exits.
  const live = new Set<Worker>();
  const onWorker = (m: unknown): void => {
    const { worker } = m as { worker: Worker };
    live.add(worker);
    worker.once('exit', () => live.delete(worker));
  };
  before(() => {
    subscribe('worker_threads', onWorker);
    dir = tmpDir('regex-deadline');
    write(dir, 'src/a-fine.ts', 'const aaa = 1;\naaa\n');
    write(dir, 'src/slow.txt', `first line\n${CATASTROPHIC_LINE}\n`);
  });
  after(() => {
    unsubscribe('worker_threads', onWorker);
    rmrf(dir);
  });

  it('grep: a catastrophic pattern fails at the deadline naming the file, while the event loop and other calls go on', async () => {
    const order: string[] = [];
    const slow = call('grep', { pattern: EXPONENTIAL }, 1500).then((r) => {
      order.push('slow grep');
      return r;
    });
    const timer = new Promise<void>((resolve) =>
      setTimeout(() => {
        order.push('timer');
        resolve();
      }, 50),
    );
    const other = call('grep', { pattern: 'const', path: 'src/a-fine.ts' }, 10_000).then((r) => {
      order.push('other grep');
      return r;
    });
    const [r, , o] = await Promise.all([slow, timer, other]);
    assert.equal(r.ok, false);
    assert.equal(r.summary, `the pattern took longer than the call's time limit of 1.5 s on src/slow.txt; ${ADVICE}`);
    assert.equal(o.ok, true, o.summary);
    assert.equal(o.output, 'src/a-fine.ts:1:const aaa = 1;');
    // The slow call answered last: the timer and the other grep ran while its pattern was stuck.
    assert.deepEqual(order.slice(-1), ['slow grep']);
    assert.deepEqual(order.slice(0, 2).sort(), ['other grep', 'timer']);
  });

  it('search-files: a catastrophic pattern fails at the deadline the same way', async () => {
    const r = await call('search-files', { pattern: EXPONENTIAL, path: 'src' }, 1000);
    assert.equal(r.ok, false);
    assert.equal(r.summary, `the pattern took longer than the call's time limit of 1 s on src/slow.txt; ${ADVICE}`);
  });

  it('replace-in-files: a pattern stopped at its deadline writes nothing, not even the files matched before', async () => {
    const r = await call('replace-in-files', { pattern: EXPONENTIAL, replacement: 'X', include: ['src/*'] }, 1000);
    assert.equal(r.ok, false);
    assert.equal(r.summary, `the pattern took longer than the call's time limit of 1 s on src/slow.txt; ${ADVICE}`);
    assert.deepEqual(r.filesTouched, []);
    // src/a-fine.ts comes first and its last line `aaa` matches: it would have been rewritten.
    assert.equal(fs.readFileSync(path.join(dir, 'src/a-fine.ts'), 'utf8'), 'const aaa = 1;\naaa\n');
    assert.equal(fs.readFileSync(path.join(dir, 'src/slow.txt'), 'utf8'), `first line\n${CATASTROPHIC_LINE}\n`);
  });

  it('replace-in-files still writes every file when the pattern is fine', async () => {
    write(dir, 'fine/x.ts', 'aaa\n');
    write(dir, 'fine/y.ts', 'baab\n');
    const r = await call('replace-in-files', { pattern: 'a+', replacement: 'A', include: ['fine/*.ts'] }, 10_000);
    assert.equal(r.ok, true, r.summary);
    assert.equal(r.summary, 'replaced 2 matches of /a+/ in 2 files');
    assert.equal(fs.readFileSync(path.join(dir, 'fine/x.ts'), 'utf8'), 'A\n');
    assert.equal(fs.readFileSync(path.join(dir, 'fine/y.ts'), 'utf8'), 'bAb\n');
  });

  it('replace-in-files refuses a replacement that would grow a file past its limit, writing nothing', async () => {
    write(dir, 'grow/a.txt', 'keep\n');
    write(dir, 'grow/b.txt', 'x'.repeat(100_000));
    const r = await call(
      'replace-in-files',
      { pattern: '', replacement: 'y'.repeat(200), include: ['grow/*'] },
      10_000,
    );
    assert.equal(r.ok, false);
    assert.equal(r.summary, 'the replacement would make grow/b.txt 19.2 MB; a replaced file may be at most 16 MB');
    assert.equal(fs.readFileSync(path.join(dir, 'grow/a.txt'), 'utf8'), 'keep\n');
  });

  it('replace-in-files refuses changes over its limit in all, writing nothing', async () => {
    // Each file becomes 13 M characters (under the 16 M of one file); the fourth passes 48 M in all.
    for (const name of ['a', 'b', 'c', 'd']) write(dir, `bulk/${name}.txt`, 'x'.repeat(100_000));
    const r = await call(
      'replace-in-files',
      { pattern: '', replacement: 'y'.repeat(130), include: ['bulk/*'] },
      10_000,
    );
    assert.equal(r.ok, false);
    assert.equal(
      r.summary,
      'the replacement changes more than 48 MB of text (at bulk/d.txt); narrow include and replace in parts',
    );
    assert.equal(fs.readFileSync(path.join(dir, 'bulk/a.txt'), 'utf8'), 'x'.repeat(100_000));
  });

  it('cancelling the call terminates its worker and answers cancelled', { timeout: 8000 }, async () => {
    const ac = new AbortController();
    // The worker on the slow file: a new one or the one an earlier call left for the next. No
    // message says it took the job (its thread is stuck in the match): it is the one whose thread
    // has been busy since the call began. Another may be alive meanwhile (one an earlier call
    // left idle for the next): that one is not this call's and stays.
    const before = new Map([...live].map((w) => [w, w.performance.eventLoopUtilization()]));
    const pending = call('grep', { pattern: EXPONENTIAL }, 60_000, ac.signal);
    const busy = (w: Worker): boolean => w.performance.eventLoopUtilization(before.get(w)).active > 100;
    const matching = await eventually(
      async () => ([...live].some(busy) ? [...live].filter(busy) : undefined),
      5000,
      'a worker matching',
    );
    const ended = matching.map((w) => new Promise((resolve) => w.once('exit', resolve)));
    ac.abort();
    const r = await pending;
    assert.equal(r.ok, false);
    assert.equal(r.summary, 'cancelled');
    // The worker stuck in the match has ended (a cancelled one is never kept; without the
    // termination it would match on and this test would time out).
    await Promise.all(ended);
    assert.ok(matching.every((w) => !live.has(w)));
  });

  it("the call's time limit bounds a search whose files are each quick but together slow", async () => {
    const many = tmpDir('regex-many');
    try {
      // 2^23 backtracking steps per file: a fraction of a second each, far more than 1.5 s for all of them.
      for (let i = 0; i < 100; i++) write(many, `f${String(i).padStart(3, '0')}.txt`, `${'a'.repeat(23)}b\n`);
      const r = await runner.run({
        tool: builtin('grep'),
        args: { pattern: EXPONENTIAL },
        sandbox: dirSandbox(many),
        signal: new AbortController().signal,
        timeoutMs: 1500,
      });
      assert.equal(r.ok, false);
      assert.match(
        r.summary,
        /^the search took longer than the call's time limit of 1.5 s \(at f\d{3}\.txt\); narrow the path or the files searched, or simplify the pattern$/,
      );
    } finally {
      rmrf(many);
    }
  });
});
