import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BUILTIN_TOOLS } from '../../../../src/domain/registry/builtins.ts';
import { toolArgumentProblems } from '../../../../src/domain/registry/tool-arguments.ts';

const schemaOf = (name: string): Record<string, unknown> => {
  const tool = BUILTIN_TOOLS.find((t) => t.name === name);
  assert.ok(tool, name);
  return tool.inputSchema;
};

describe('toolArgumentProblems', () => {
  const replace = schemaOf('builtin/replace-in-files');

  it('refuses a pattern that does not compile, naming the argument and the regex error', () => {
    assert.deepEqual(toolArgumentProblems(replace, { pattern: '(', replacement: 'x', include: ['**/*'], flags: 'g' }), [
      {
        field: 'pattern',
        description: 'is not a valid regular expression: Invalid regular expression: /(/g: Unterminated group',
      },
    ]);
  });

  it('compiles the pattern with the given flags (u makes an escape that is fine without it invalid)', () => {
    assert.deepEqual(toolArgumentProblems(replace, { pattern: '\\-', flags: 'g' }), []);
    assert.equal(toolArgumentProblems(replace, { pattern: '\\-', flags: 'gu' })[0]?.field, 'pattern');
  });

  it("refuses flags outside the schema's pattern", () => {
    assert.deepEqual(toolArgumentProblems(replace, { pattern: 'a', flags: 'gx' }), [
      { field: 'flags', description: '"gx" does not match ^[gimsuy]*$' },
    ]);
  });

  it('accepts valid arguments, and leaves types and required names to the schema validator', () => {
    assert.deepEqual(toolArgumentProblems(replace, { pattern: 'colou?r', replacement: 'color', flags: 'gi' }), []);
    assert.deepEqual(toolArgumentProblems(schemaOf('builtin/search-files'), { pattern: '[' }).length, 1);
    assert.deepEqual(toolArgumentProblems(replace, { pattern: 3 }), []);
  });
});
