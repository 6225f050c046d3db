import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Report, type Figure } from '../../bench/lib/report.ts';
import { TARGETS } from '../../bench/lib/targets.ts';

const send = (conns: number, sides: Partial<Figure>): Figure => ({
  workload: 'SendMessage',
  metric: `throughput @${conns} conns`,
  unit: 'req/s',
  ours: Number.NaN,
  ...sides,
});

const verdict = (report: Report, ran: string[], name: string) => {
  const v = report.verdicts(new Set(ran)).find((x) => x.target.name === name);
  assert.ok(v, `no verdict named ${name}`);
  return v;
};

describe('bench report targets', () => {
  it('judges SendMessage against the persisted floor and the reference of the same row', () => {
    const report = new Report();
    report.add(send(16, { ours: 800, reference: 600, persisted: 1_000 }));
    const persisted = verdict(report, ['unary'], 'SendMessage @16 conns vs the persisted floor');
    assert.equal(persisted.met, true);
    assert.equal(persisted.limit, 800);
    const reference = verdict(report, ['unary'], 'SendMessage @16 conns vs the reference');
    assert.equal(reference.met, false);
    assert.equal(reference.base, 600);
  });

  it('judges a bound in the row unit, whatever the metric says of its conditions', () => {
    const report = new Report();
    report.add({
      workload: 'plan',
      metric: '100-step write-file plan, per-step overhead: (execute wall 2000 ms − tools 300 ms) / 100; 3 plans',
      unit: 'ms',
      ours: 25.5,
    });
    const v = verdict(report, ['plan'], 'plan: 100-step plan, overhead per step');
    assert.equal(v.met, false);
    assert.equal(v.limit, 25);
  });

  it('lists a target whose row is missing as not measured, and one matched twice as a bench bug', () => {
    const report = new Report();
    report.add(send(32, { ours: 1, persisted: 1 }));
    report.add(send(32, { ours: 1, persisted: 1 }));
    assert.equal(verdict(report, ['unary'], 'SendMessage @16 conns vs the persisted floor').note, 'not measured');
    const twice = verdict(report, ['unary'], 'SendMessage @32 conns vs the persisted floor');
    assert.equal(twice.met, undefined);
    assert.match(twice.note ?? '', /2 rows match/);
  });

  it('lists only the targets of the workloads that ran, and counts them in the summary', () => {
    const report = new Report();
    const verdicts = report.verdicts(new Set(['stdio']));
    assert.deepEqual(
      verdicts.map((v) => v.target.name),
      ['stdio GetTask, 32 in flight, vs the echo child'],
    );
    assert.match(report.renderTargets(verdicts), /targets: 0 of 1 met, 0 missed, 1 not measured/);
  });

  it('judges `agents health` on its own row, not on the phase rows that follow it', () => {
    const report = new Report();
    report.add({ workload: 'CLI', metric: '`agents health` local, wall (hyperfine)', unit: 'ms', ours: 2, floor: 1 });
    report.add({ workload: 'CLI', metric: '`agents health` phase: agent ready', unit: 'ms', ours: 50 });
    const v = verdict(report, ['cli'], '`agents health` (local) vs `node -e 0`');
    assert.equal(v.met, true);
    assert.equal(v.ours, 2);
  });

  it('declares each target once, with a name of its own', () => {
    const names = TARGETS.map((t) => t.name);
    assert.equal(new Set(names).size, names.length);
  });
});
