/** The words and names ranking works with: stems, goal terms, the files a text names. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  goalTerms,
  hasBinaryExtension,
  joinRelative,
  moduleCandidates,
  namedRefs,
  occurrences,
  pathStems,
  stem,
} from '../../../../src/application/context/context-terms.ts';

describe('context terms', () => {
  it('stems word forms together and leaves short words alone', () => {
    assert.deepEqual(['parse', 'parsing', 'parser', 'parsed', 'tests', 'dates', 'api', 'use'].map(stem), [
      'pars',
      'pars',
      'pars',
      'pars',
      'test',
      'dat',
      'api',
      'use',
    ]);
  });

  it('takes a goal’s distinct stems without stopwords or words under three letters', () => {
    assert.deepEqual(goalTerms('Fix the failing parseDate test in src/db, and the tests'), [
      'fail',
      'pars',
      'dat',
      'test',
      'src',
    ]);
  });

  it('splits a path into file-name and directory stems (camelCase, dashes, extension dropped)', () => {
    assert.deepEqual(pathStems('src/dateUtils/parse-date.test.ts'), {
      name: ['pars', 'dat', 'test'],
      dirs: ['src', 'dat', 'util'],
    });
  });

  it('counts a stem only where a word starts', () => {
    assert.equal(occurrences('update the date; dates, validated', 'dat', 10), 2);
  });

  it('finds imports, requires, includes, python imports and path-like words', () => {
    const text = [
      "import { a } from './a.js';",
      "const b = require('../lib/b');",
      'from pkg.mod import x',
      '#include "util.h"',
      'see docs/guide.md and README.md.',
      "import 'zod';",
    ].join('\n');
    assert.deepEqual(
      namedRefs(text).map((r) => `${r.kind}:${r.spec}`),
      [
        'import:./a.js',
        'import:../lib/b',
        'import:zod',
        'import:util.h',
        'python:pkg.mod',
        'path:./a.js',
        'path:pkg.mod', // looks like a file name: resolved only if such a file exists
        'path:util.h',
        'path:docs/guide.md',
        'path:README.md',
      ],
    );
  });

  it('resolves a module specifier the ways TypeScript and Node write them', () => {
    assert.equal(joinRelative('src/date', '../lib/./b'), 'src/lib/b');
    assert.equal(joinRelative('', '../x'), undefined);
    const c = moduleCandidates('src/a.js');
    assert.deepEqual(c.slice(0, 2), ['src/a.js', 'src/a.ts']);
    assert.ok(moduleCandidates('src/b').includes('src/b/index.ts'));
  });

  it('tells binary files by extension, whatever the case, and not dot-files', () => {
    assert.deepEqual(['a/logo.PNG', 'x.wasm', 'a/.png', 'notes.txt', 'Makefile'].map(hasBinaryExtension), [
      true,
      true,
      false,
      false,
      false,
    ]);
  });
});
