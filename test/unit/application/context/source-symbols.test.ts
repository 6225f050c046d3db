/** The top-level symbols the repository map shows, per language, by line patterns. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { symbolText } from '../../../../src/application/context/context-map.ts';
import { languageOf, sourceSymbols } from '../../../../src/application/context/source-symbols.ts';

const names = (path: string, text: string): string[] => sourceSymbols(path, text).map((s) => `${s.kind} ${s.name}`);

describe('sourceSymbols', () => {
  it('finds the top-level declarations and exported names of TypeScript, not nested ones or imports', () => {
    const ts = [
      "import { x } from './x.js';",
      "import type { Y } from './y.ts';",
      'export async function parseDate(s: string): Date {',
      '  const inner = 1;',
      '  function nested() {}',
      '}',
      'function helper() {}',
      'export default class DateParser extends Base {}',
      'export abstract class Shape {}',
      'export interface Options {',
      '  strict: boolean;',
      '}',
      'export type Mode = "a" | "b";',
      'type Pair<T> = [T, T];',
      'export const enum Color { Red }',
      'export const MAX = 3;',
      'const local = () => 1;',
      'let counter = 0;',
      'export { helper as publicHelper, type Options as Opts };',
      'export {',
      '  a,',
      '  b as c,',
      "} from './abc.js';",
      'declare module "foo" {}',
    ].join('\n');
    assert.deepEqual(names('src/date.ts', ts), [
      'function parseDate',
      'class DateParser',
      'class Shape',
      'interface Options',
      'type Mode',
      'enum Color',
      'const MAX',
      'export publicHelper',
      'export Opts',
      'export a',
      'export c',
    ]);
  });

  it('shows every top-level name of a script that exports nothing', () => {
    const js = ['function main() {}', 'const app = express();', 'class Server {}', 'module.exports = { main };'].join(
      '\n',
    );
    assert.deepEqual(names('bin/server.js', js), ['function main', 'const app', 'class Server']);
  });

  it('finds Python functions, classes and UPPER_CASE constants at the top level only', () => {
    const py = [
      'import os',
      'from .util import pad',
      'MAX_SIZE = 10',
      'TIMEOUT: int = 3',
      'lower = 1',
      'def parse_date(s):',
      'def _private(s):',
      '    def inner(): pass',
      '    return s',
      'async def fetch(url):',
      '    pass',
      'class DateParser(Base):',
      '    def method(self): pass',
      'if X == 1:',
      '    pass',
    ].join('\n');
    assert.deepEqual(names('pkg/date.py', py), [
      'const MAX_SIZE',
      'const TIMEOUT',
      'function parse_date',
      'function fetch',
      'class DateParser',
    ]);
  });

  it('finds Go functions with their receivers, Rust items and Java types and public methods', () => {
    const go = [
      'package store',
      'type Repo struct {',
      '  db *sql.DB',
      '}',
      'type Getter interface { Get() }',
      'func New(db *sql.DB) *Repo { return &Repo{db} }',
      'func (r *Repo) Get(id string) error { return nil }',
      'func (Repo) Close() {}',
      'const Version = "1"',
    ].join('\n');
    assert.deepEqual(names('store/repo.go', go), [
      'struct Repo',
      'interface Getter',
      'function New',
      'method Repo.Get',
      'method Repo.Close',
      'const Version',
    ]);
    const rs = [
      'use std::fmt;',
      'pub struct Point { x: i32 }',
      'pub(crate) enum Shape { A }',
      'pub trait Area {}',
      'impl<T> fmt::Display for Point<T> {',
      '    fn fmt(&self) {}',
      '}',
      'pub async fn run() {}',
      'const LIMIT: u32 = 3;',
      'macro_rules! square { () => {} }',
    ].join('\n');
    assert.deepEqual(names('src/lib.rs', rs), [
      'struct Point',
      'enum Shape',
      'trait Area',
      'impl fmt::Display for Point',
      'function run',
      'const LIMIT',
      'macro square',
    ]);
    const java = [
      'package a.b;',
      'public final class DateParser {',
      '    private int n;',
      '    public Date parse(String s) {',
      '        return null;',
      '    }',
      '    public static <T> List<T> all(Class<T> c) { return null; }',
      '    private void hidden() {}',
      '    public Foo foo = new Foo();',
      '}',
      'interface Helper {}',
    ].join('\n');
    assert.deepEqual(names('src/DateParser.java', java), [
      'class DateParser',
      'method parse',
      'method all',
      'interface Helper',
    ]);
  });

  it('reads only source files it knows, and skips minified bundles and very long lines', () => {
    assert.equal(languageOf('README.md'), undefined);
    assert.equal(languageOf('Makefile'), undefined);
    assert.equal(languageOf('dist/app.min.js'), undefined);
    assert.equal(languageOf('src/a.TS'), 'typescript');
    assert.deepEqual(names('docs/guide.md', 'export function notCode() {}'), []);
    assert.deepEqual(names('a.js', `export const x = ${'1+'.repeat(300)}1;`), []);
  });

  it('writes a file line with the symbols grouped by kind, at most 16 names', () => {
    const many = Array.from({ length: 20 }, (_, i) => ({ kind: 'function' as const, name: `f${i}` }));
    assert.equal(
      symbolText([
        { kind: 'function', name: 'a' },
        { kind: 'class', name: 'B' },
        { kind: 'function', name: 'c' },
      ]),
      ': function a, c; class B',
    );
    assert.equal(
      symbolText(many),
      `: function ${many
        .slice(0, 16)
        .map((s) => s.name)
        .join(', ')}; +4 more`,
    );
    assert.equal(symbolText([]), '');
  });
});
