import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { replacedLength } from '../../../../src/infrastructure/tools/replacement-length.ts';

describe('replacedLength', () => {
  const texts = ['', 'abc', 'aaa bbb aaa', 'x1y22z333', 'héllo wörld 😀 ok', 'foo=bar; baz=qux'];
  const patterns = [
    /(?:)/g,
    /a+/g,
    /(a)(b)?/g,
    /(?<w>\w)(?=(\w*))/gu,
    /\d+/g,
    /(\w+)=(\w+)/g,
    /(?<k>\w+)=(?<v>\w+)/g,
    /o/gi,
    /(.)(.)(.)(.)(.)(.)(.)(.)(.)(.)(.)/g,
  ];
  const templates = [
    ...['', 'X', '$$', '$&$&', '$`', "$'", '$1', '$2', '$3', '$10', '$11', '$01', '$0', '$12', '$<w>'],
    ...[
      '$<v>=$<k>',
      '$<nope>',
      '$<unclosed',
      '$',
      'a$',
      '$x',
      '$$1',
      '$1$2$1',
      "[$&|$`|$']",
      '$<k',
      '$00',
      '$99',
      '$1a',
    ],
  ];

  it('is the length String.prototype.replace gives, and the number of matches, for every kind of $ reference', () => {
    for (const text of texts)
      for (const re of patterns)
        for (const template of templates) {
          const want = { count: [...text.matchAll(re)].length, length: text.replace(re, template).length };
          assert.deepEqual(replacedLength(text, re, template), want, `${JSON.stringify(text)} ${re} ${template}`);
        }
  });

  it('counts a result far larger than the text without building it', () => {
    // A lookahead capture of the rest at each of the 10,001 positions: 50 million characters.
    const text = 'x'.repeat(10_000);
    assert.deepEqual(replacedLength(text, /(?=(x*))/g, '$1'), {
      count: 10_001,
      length: (10_000 * 10_001) / 2 + 10_000,
    });
  });
});
