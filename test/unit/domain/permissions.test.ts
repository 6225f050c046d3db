import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isWrite, roleGrants, ROLES, PERMISSIONS } from '../../../src/domain/permissions.js';

describe('the role table', () => {
  it('owner, admin and member write; a viewer only reads', () => {
    for (const role of ROLES)
      for (const p of PERMISSIONS) assert.equal(roleGrants(role, p), role !== 'viewer' || !isWrite(p), `${role} ${p}`);
    assert.deepEqual(
      PERMISSIONS.filter((p) => isWrite(p)),
      ['task:write', 'session:write', 'registry:write', 'plan:write'],
    );
    assert.equal(roleGrants('viewer', 'plan:write'), false);
    assert.equal(roleGrants('viewer', 'plan:read'), true);
  });
});
