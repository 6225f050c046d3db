/** `--events`: a plan task's status events become phase lines when the plan's phase or state changes. */
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import { EventLines } from '../../../../../src/presentation/cli/support/events.ts';

const PLAN_META = 'urn:cleveragents:plan';

function lines(): { sink: EventLines; read: () => Array<Record<string, unknown>> } {
  const out = new PassThrough();
  let text = '';
  out.on('data', (c: Buffer) => (text += c.toString()));
  return {
    sink: new EventLines(out),
    read: () =>
      text
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

const status = (state: string, phase: { phase: string; state: string } | undefined) => ({
  statusUpdate: {
    taskId: 't1',
    contextId: 'c1',
    status: {
      state: 'TASK_STATE_WORKING' as const,
      message: { messageId: 'm', role: 'ROLE_AGENT' as const, parts: [{ text: state }] },
    },
    ...(phase ? { metadata: { [PLAN_META]: { planId: 'p1', ...phase, stepsDone: 1 } } } : {}),
  },
});

describe('--events lines', () => {
  it('writes a phase line from the plan metadata of a status event, once per change', () => {
    const { sink, read } = lines();
    sink.event(1, status('Step 1/2', { phase: 'execute', state: 'processing' }));
    sink.event(2, status('Step 2/2', { phase: 'execute', state: 'processing' }));
    sink.event(3, status('waiting', { phase: 'execute', state: 'waiting' }));
    sink.event(4, status('no plan here', undefined));
    const got = read().map((l) =>
      l['type'] === 'phase' ? `phase ${String(l['phase'])}/${String(l['state'])}` : `event ${String(l['seq'])}`,
    );
    assert.deepEqual(got, [
      'event 1',
      'phase execute/processing',
      'event 2',
      'event 3',
      'phase execute/waiting',
      'event 4',
    ]);
  });
});
