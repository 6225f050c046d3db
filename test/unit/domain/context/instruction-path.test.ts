/** Which paths a project or an action may name as instruction files: relative ones inside the resource only. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InstructionPath, InstructionSettings } from '../../../../src/domain/context/context.ts';

const problem = (p: string): string | undefined => {
  const r = InstructionPath.safeParse(p);
  return r.success ? undefined : r.error.issues.map((i) => i.message).join('; ');
};

describe('InstructionPath', () => {
  it('accepts paths relative to the resource root', () => {
    for (const p of ['AGENTS.md', 'docs/STYLE.md', './docs/x.md', 'a..b/c.md', '.github/AGENTS.md'])
      assert.equal(problem(p), undefined, p);
  });

  it('refuses absolute paths, climbing out, empty and NUL, each with its reason', () => {
    assert.equal(problem('/etc/passwd'), 'must be relative to the resource root, not an absolute path');
    assert.equal(problem('C:/x.md'), 'must be relative to the resource root, not an absolute path');
    assert.equal(problem('\\\\server\\share'), 'must be relative to the resource root, not an absolute path');
    assert.equal(problem('../x.md'), 'must stay inside the resource (no ..)');
    assert.equal(problem('docs/../../x.md'), 'must stay inside the resource (no ..)');
    assert.equal(problem('docs\\..\\x.md'), 'must stay inside the resource (no ..)');
    assert.equal(problem('a\0b'), 'must not contain a NUL character');
    assert.match(problem('') ?? '', /must not be empty/);
  });

  it('the settings refuse unknown fields and out-of-range limits', () => {
    assert.equal(InstructionSettings.safeParse({ maxTokens: 0, maxFileSize: 1, enabled: false }).success, true);
    for (const bad of [{ maxTokens: -1 }, { maxFileSize: 0 }, { maxFileSize: 2 * 1024 * 1024 }, { colour: 1 }])
      assert.equal(InstructionSettings.safeParse(bad).success, false, JSON.stringify(bad));
  });
});
