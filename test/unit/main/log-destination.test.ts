import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { TickBatchedDestination } from '../../../src/main/log-destination.ts';

const nextCheckPhase = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

test('the lines of one tick leave in one write, in order, at the next check phase', async () => {
  const writes: string[] = [];
  const d = new TickBatchedDestination({ write: (t) => writes.push(t) });
  d.write('a\n');
  d.write('b\n');
  d.write('c\n');
  assert.deepEqual(writes, [], 'nothing is written within the tick');
  await nextCheckPhase();
  assert.deepEqual(writes, ['a\nb\nc\n']);
  d.write('d\n');
  await nextCheckPhase();
  assert.deepEqual(writes, ['a\nb\nc\n', 'd\n'], 'a later tick is a later write');
});

test('flush writes what is batched at once, and an empty flush writes nothing', async () => {
  const writes: string[] = [];
  const d = new TickBatchedDestination({ write: (t) => writes.push(t) });
  d.flush();
  d.write('x\n');
  d.flush();
  assert.deepEqual(writes, ['x\n']);
  await nextCheckPhase();
  assert.deepEqual(writes, ['x\n'], 'the scheduled flush finds nothing left');
});

test("pino's logger.flush(cb) writes the batch and calls back", async () => {
  const writes: string[] = [];
  const logger = pino({ base: null, timestamp: false }, new TickBatchedDestination({ write: (t) => writes.push(t) }));
  logger.info('one');
  await new Promise<void>((resolve, reject) => logger.flush((err) => (err ? reject(err) : resolve())));
  assert.deepEqual(writes, ['{"level":30,"msg":"one"}\n']);
});

test('a process that exits in the same tick still writes its lines, including those logged while it exits', () => {
  const mod = fileURLToPath(new URL('../../../src/main/log-destination.ts', import.meta.url));
  const script = `
    const { TickBatchedDestination } = await import(${JSON.stringify(mod)});
    const d = new TickBatchedDestination({ write: (t) => process.stderr.write(t) });
    process.on('exit', () => d.write('while exiting\\n'));
    d.write('first\\n');
    d.write('second\\n');
    process.exit(3);
  `;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  assert.equal(r.status, 3);
  assert.equal(r.stderr, 'first\nsecond\nwhile exiting\n');
});
