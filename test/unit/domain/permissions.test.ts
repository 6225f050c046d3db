import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  isWrite,
  mayAssign,
  NAMESPACE_PERMISSIONS,
  PERMISSIONS,
  permissionLevel,
  roleGrants,
  ROLES,
} from '../../../src/domain/permissions.ts';

describe('the role table', () => {
  it('a viewer reads; a member also writes; an admin also manages members; only an owner deletes', () => {
    const granted = (role: (typeof ROLES)[number]) => NAMESPACE_PERMISSIONS.filter((p) => roleGrants(role, p));
    assert.deepEqual(granted('viewer'), ['task:read', 'session:read', 'registry:read', 'plan:read']);
    assert.deepEqual(
      granted('member'),
      NAMESPACE_PERMISSIONS.filter((p) => !p.startsWith('namespace:')),
    );
    assert.deepEqual(granted('admin'), [...granted('member'), 'namespace:manage']);
    assert.deepEqual(granted('owner'), [...NAMESPACE_PERMISSIONS]);
    for (const role of ROLES)
      for (const p of NAMESPACE_PERMISSIONS)
        if (isWrite(p)) assert.equal(roleGrants('viewer', p), false, `${role} ${p}`);
  });

  it('no role grants a caller- or server-level permission: the dispatcher decides those', () => {
    for (const p of PERMISSIONS.filter((x) => permissionLevel(x) !== 'namespace'))
      for (const role of ROLES) assert.equal(roleGrants(role, p), false, `${role} ${p}`);
    assert.equal(permissionLevel('account:self'), 'caller');
    assert.equal(permissionLevel('server:admin'), 'server');
    assert.equal(isWrite('server:admin'), false);
  });

  it('an owner hands out any role, an admin any but owner, others none', () => {
    for (const r of ROLES) assert.equal(mayAssign('owner', r), true);
    for (const r of ROLES) assert.equal(mayAssign('admin', r), r !== 'owner');
    for (const r of ROLES) assert.equal(mayAssign('member', r), false);
    for (const r of ROLES) assert.equal(mayAssign('viewer', r), false);
  });
});
