import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { planNetwork } from '../../../../src/domain/plan/plan.ts';

describe("a plan's network", () => {
  it('is none by default', () => {
    assert.equal(planNetwork([undefined]), 'none');
    assert.equal(planNetwork([undefined, undefined], 'none'), 'none');
  });
  it('is allowed when the action or a project allows it', () => {
    assert.equal(planNetwork([undefined], 'allow'), 'allow');
    assert.equal(planNetwork([undefined, 'allow']), 'allow');
  });
  it("a project's explicit none beats the action and the other projects", () => {
    assert.equal(planNetwork(['none'], 'allow'), 'none');
    assert.equal(planNetwork(['allow', 'none']), 'none');
  });
});
