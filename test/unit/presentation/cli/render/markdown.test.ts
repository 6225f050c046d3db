/** Markdown for a terminal: fixed input, the exact output; streamed, line by line. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { palette } from '../../../../../src/presentation/cli/render/colors.ts';
import { highlightCode } from '../../../../../src/presentation/cli/render/code-highlight.ts';
import { MarkdownStream, renderInline } from '../../../../../src/presentation/cli/render/markdown.render.ts';

const ON = palette(true);
const OFF = palette(false);
const DOC = [
  '# Title',
  '## Part',
  'Some **bold**, *italic*, `code` and [docs](https://x.test/d).',
  '- one',
  '  * nested',
  '1. first',
  '> quoted',
  '```ts',
  'const a = 1;',
  '```',
  'end',
].join('\n');

describe('MarkdownStream', () => {
  it('renders headings, lists, quotes, inline marks, links and a fenced block (no colour)', () => {
    assert.equal(
      MarkdownStream.render(DOC, OFF),
      [
        'Title',
        'Part',
        'Some bold, italic, code and docs (https://x.test/d).',
        '• one',
        '  • nested',
        '1. first',
        '│ quoted',
        '┌─ ts ',
        '│ const a = 1;',
        '└─',
        'end',
        '',
      ].join('\n'),
    );
  });

  it('styles them with ANSI on a colour terminal, and highlights the code by its language', () => {
    const out = MarkdownStream.render(DOC, ON);
    assert.ok(out.startsWith('\u001b[1m\u001b[4mTitle\u001b[24m\u001b[22m\n'), JSON.stringify(out.slice(0, 40)));
    assert.ok(out.includes('Some \u001b[1mbold\u001b[22m, \u001b[3mitalic\u001b[23m, \u001b[36mcode\u001b[39m'), out);
    assert.ok(out.includes('\u001b[35mconst\u001b[39;22;23m a = \u001b[33m1\u001b[39;22;23m;'), out);
  });

  it('renders each line once it is whole, a code block line by line', () => {
    const md = new MarkdownStream(OFF);
    assert.equal(md.push('Hel'), '');
    assert.equal(md.push('lo **w'), '');
    assert.equal(md.push('orld**\n- a'), 'Hello world\n');
    assert.equal(md.push('\n```py\nx = 1\n'), '• a\n┌─ py \n│ x = 1\n');
    assert.equal(md.push('```\n'), '└─\n');
    assert.equal(md.push('tail'), '');
    assert.equal(md.end(), 'tail\n');
  });

  it('closes a block whose fence never closed when the answer ends', () => {
    const md = new MarkdownStream(OFF);
    assert.equal(md.push('```\nhalf'), '┌─\n');
    assert.equal(md.end(), '│ half\n└─\n');
  });

  it('live: shows the line being written as it comes, then redraws it rendered from where it began', () => {
    const md = new MarkdownStream(OFF, 20, { column: 8 });
    assert.equal(md.push('a **b'), 'a **b');
    assert.equal(md.push('** c\nnext '), `\u001b[9G\u001b[Ja b c\nnext `);
    // A second line starts at column 0; one that wrapped goes up the rows it took.
    assert.equal(md.push('x'.repeat(30)), 'x'.repeat(30));
    assert.equal(md.end(), `\u001b[1A\u001b[1G\u001b[Jnext ${'x'.repeat(30)}\n`);
  });
});

describe('renderInline and highlightCode', () => {
  it('keeps text that is no markup as it is', () => {
    assert.equal(renderInline('a < b & "c" snake_case_name', OFF), 'a < b & "c" snake_case_name');
  });
  it('leaves code of a language it does not know uncoloured', () => {
    assert.equal(highlightCode('x := 1', 'klingon'), 'x := 1');
  });
});
