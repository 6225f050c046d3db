/**
 * Syntax highlighting of a fenced code block for a terminal: highlight.js (its core and the
 * languages people paste most, so the bundle stays small) with a small ANSI theme of our own.
 */
import hljs from './hljs.js';

const sgr = (open: number): string => `\u001b[${open}m`;
const RESET = '\u001b[39;22;23m';

/** highlight.js scopes to ANSI colours (the first word of a span's class decides). */
const THEME: Record<string, string> = {
  keyword: sgr(35),
  built_in: sgr(36),
  type: sgr(36),
  literal: sgr(33),
  number: sgr(33),
  string: sgr(32),
  regexp: sgr(32),
  symbol: sgr(33),
  comment: `${sgr(2)}${sgr(3)}`,
  doctag: sgr(2),
  meta: sgr(2),
  title: sgr(34),
  'title.function': sgr(34),
  'title.class': `${sgr(36)}${sgr(1)}`,
  attr: sgr(36),
  attribute: sgr(36),
  variable: sgr(33),
  params: '',
  addition: sgr(32),
  deletion: sgr(31),
  section: `${sgr(34)}${sgr(1)}`,
  tag: sgr(34),
  name: sgr(34),
  property: sgr(36),
};

const ENTITIES: Record<string, string> = { '&lt;': '<', '&gt;': '>', '&amp;': '&', '&quot;': '"', '&#x27;': "'" };
const decode = (s: string): string => s.replace(/&(?:lt|gt|amp|quot|#x27);/g, (e) => ENTITIES[e] ?? e);

/** Whether `lang` (a fence's info word) is one we colour; aliases (`ts`, `sh`, `py`) count. */
export const knownLanguage = (lang: string): boolean => lang !== '' && hljs.getLanguage(lang) !== undefined;

/**
 * The code with ANSI colours, line for line as given (a language we do not know, or none:
 * as it is). highlight.js's HTML spans nest; a stack restores the outer colour after each.
 */
export function highlightCode(code: string, lang: string): string {
  if (!knownLanguage(lang)) return code;
  const html = hljs.highlight(code, { language: lang, ignoreIllegals: true }).value;
  const stack: string[] = [];
  let out = '';
  for (const m of html.matchAll(/<span class="([^"]*)">|<\/span>|[^<]+/g)) {
    const [tok, cls] = m;
    if (cls !== undefined) {
      const scope = cls.replace(/^hljs-/, '').split(' ')[0] ?? '';
      const style = THEME[scope.replace(/_$/, '')] ?? THEME[scope.split('.')[0] ?? ''] ?? '';
      stack.push(style);
      out += style;
    } else if (tok === '</span>') {
      stack.pop();
      out += RESET + stack.join('');
    } else out += decode(tok);
  }
  // Whatever is open at the end (an unclosed span) is closed: the text after the block is plain.
  return out.includes('\u001b[') ? `${out}${RESET}` : out;
}
