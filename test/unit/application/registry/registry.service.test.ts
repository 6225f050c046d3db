/** RegistryService.list over fakes: a filter that cannot apply is refused, not answered with nothing. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LOCAL_PRINCIPAL } from '../../../../src/application/index.ts';
import { RegistryService } from '../../../../src/application/registry/registry.service.ts';
import { AppError } from '../../../../src/domain/errors.ts';
import type { RegistryEntity } from '../../../../src/domain/registry/entities.ts';

function service(stored: RegistryEntity[] = []) {
  const queries: unknown[] = [];
  const repo = {
    list: (q: unknown) => {
      queries.push(q);
      return Promise.resolve(stored);
    },
  };
  const svc = new RegistryService({
    repo,
    namespaces: { readable: () => Promise.resolve(['local']) },
    inspector: {},
    builtins: {},
    builtinModels: [],
  } as never);
  return { svc, queries };
}

const entity = (kind: RegistryEntity['kind'], name: string, definition: Record<string, unknown>): RegistryEntity => ({
  kind,
  name,
  namespace: 'local',
  revision: 1,
  contentHash: 'h',
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
  builtin: false,
  definition: { name, ...definition },
});

describe('RegistryService.list type filter', () => {
  for (const kind of ['skill', 'project', 'action'] as const) {
    it(`refuses type on ${kind}s, which have none, before reading anything`, async () => {
      const { svc, queries } = service();
      await assert.rejects(
        svc.list(kind, { type: 'x' }, LOCAL_PRINCIPAL),
        (e: unknown) =>
          e instanceof AppError &&
          e.reason === 'INVALID_PARAMS' &&
          e.fields[0]?.field === 'type' &&
          e.message === `type does not apply to ${kind}s: they have no type to filter on`,
      );
      assert.deepEqual(queries, []);
    });
  }

  it('passes type on to the repository for resources, which have one', async () => {
    const { svc, queries } = service([entity('resource', 'local/a', { type: 'git-checkout' })]);
    const out = await svc.list('resource', { type: 'git-checkout' }, LOCAL_PRINCIPAL);
    assert.deepEqual(queries, [{ kind: 'resource', namespaces: ['local'], type: 'git-checkout' }]);
    assert.deepEqual(
      out.items.map((e) => e.name),
      ['local/a'],
    );
  });
});
