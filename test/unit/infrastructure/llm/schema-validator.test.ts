import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { AjvSchemaValidator } from '../../../../src/infrastructure/index.ts';

const schema = {
  type: 'object',
  properties: {
    path: { type: 'string' },
    lines: { type: 'array', items: { type: 'integer' } },
    mode: { enum: ['read', 'write'] },
  },
  required: ['path'],
  additionalProperties: false,
};

describe('AjvSchemaValidator', () => {
  const v = new AjvSchemaValidator();

  it('a valid value has no problems', () => {
    assert.deepEqual(v.validate(schema, { path: 'a', lines: [1, 2], mode: 'read' }), []);
  });

  it('reports every problem with its path, as ajv words it', () => {
    assert.deepEqual(v.validate(schema, { lines: [1, 'x'], mode: 'delete', extra: 1 }).sort(), [
      '/lines/1 must be integer',
      '/mode must be equal to one of the allowed values ("read", "write")',
      "must NOT have additional properties 'extra'",
      "must have required property 'path'",
    ]);
    assert.deepEqual(v.validate(schema, { path: 3 }), ['/path must be string']);
    assert.deepEqual(v.validate(schema, 'not an object'), ['must be object']);
  });

  it('a schema that does not compile is one problem, not a throw', () => {
    const problems = v.validate({ type: 'object', properties: { a: { type: 'no-such-type' } } }, { a: 1 });
    assert.equal(problems.length, 1);
    assert.match(problems[0] ?? '', /^the tool's input schema is invalid: /);
  });

  it('tolerates unknown keywords and formats (strict: false) and schemas with the same $id', () => {
    const s = {
      $id: 'urn:tool',
      type: 'object',
      properties: { when: { type: 'string', format: 'date-time' } },
      'x-ui': 1,
    };
    assert.deepEqual(v.validate(s, { when: 'anything' }), []);
    assert.deepEqual(v.validate({ ...s, required: ['when'] }, {}), ["must have required property 'when'"]);
  });

  it('stays correct past its cache bound', () => {
    for (let i = 0; i < 300; i++) {
      const s = { type: 'object', properties: { [`p${i}`]: { type: 'number' } } };
      assert.deepEqual(v.validate(s, { [`p${i}`]: 'x' }), [`/p${i} must be number`]);
    }
    assert.deepEqual(v.validate(schema, { path: 3 }), ['/path must be string']);
  });
});
