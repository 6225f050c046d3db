/**
 * Markdown for a terminal, as it streams: each line is shown once it is whole (headings, lists,
 * quotes, rules, and inline bold, italic, code and links through marked's inline lexer), a fenced
 * code block's lines highlighted one by one. Plain output never comes here.
 */
import { Lexer, type Token } from 'marked';
import type { Palette } from './colors.ts';
import { highlightCode } from './code-highlight.ts';

const italic = (pal: Palette, s: string): string => (pal.enabled ? `\u001b[3m${s}\u001b[23m` : s);
const underline = (pal: Palette, s: string): string => (pal.enabled ? `\u001b[4m${s}\u001b[24m` : s);
const strike = (pal: Palette, s: string): string => (pal.enabled ? `\u001b[9m${s}\u001b[29m` : s);

/** Inline markdown of one line: `**bold**`, `*italic*`, `` `code` ``, `[text](url)`, `~~gone~~`. */
export function renderInline(text: string, pal: Palette): string {
  return inlineTokens(Lexer.lexInline(text), pal);
}

function inlineTokens(tokens: readonly Token[], pal: Palette): string {
  return tokens.map((t) => inlineToken(t, pal)).join('');
}

function inlineToken(t: Token, pal: Palette): string {
  const inner = (): string => ('tokens' in t && t.tokens ? inlineTokens(t.tokens, pal) : t.raw);
  switch (t.type) {
    case 'strong':
      return pal.bold(inner());
    case 'em':
      return italic(pal, inner());
    case 'codespan':
      return pal.cyan(String(t.text));
    case 'del':
      return strike(pal, inner());
    case 'link': {
      const label = inner();
      const href = String(t.href);
      return label === href || `mailto:${label}` === href
        ? underline(pal, pal.blue(label))
        : `${underline(pal, pal.blue(label))} ${pal.dim(`(${href})`)}`;
    }
    case 'escape':
    case 'text':
      // A text token may nest more inline tokens (within a link, say); the raw text otherwise.
      return 'tokens' in t && t.tokens ? inlineTokens(t.tokens, pal) : String(t.text);
    case 'br':
      return '\n';
    default:
      return t.raw;
  }
}

const FENCE = /^(\s{0,3})(`{3,}|~{3,})\s*([\w+#.-]*)/;

/** Where a live answer's first line starts on the terminal (after `agent › `). */
export interface LiveOptions {
  column: number;
}

/**
 * A markdown answer rendered line by line as its text streams in. Live (a terminal): the line
 * being written is shown as it comes, and redrawn rendered once it is whole, so a long paragraph
 * never waits for its end to be seen.
 */
export class MarkdownStream {
  private pending = '';
  private fence: { marker: string; lang: string } | undefined;
  private readonly pal: Palette;
  private readonly width: number;
  private readonly live: LiveOptions | undefined;
  /** The column the line being written started at (the first line: after the prompt). */
  private column: number;

  constructor(pal: Palette, width = 80, live?: LiveOptions) {
    this.pal = pal;
    this.width = Math.max(20, width);
    this.live = live;
    this.column = live?.column ?? 0;
  }

  /** Takes a chunk of the answer; returns what to write: whole lines rendered, and (live) the line begun. */
  push(chunk: string): string {
    let out = '';
    let rest = chunk;
    let nl = rest.indexOf('\n');
    while (nl >= 0) {
      const shown = this.pending;
      this.pending += rest.slice(0, nl);
      out += this.erase(shown) + this.line(this.pending);
      this.pending = '';
      this.column = 0;
      rest = rest.slice(nl + 1);
      nl = rest.indexOf('\n');
    }
    if (rest !== '') {
      this.pending += rest;
      if (this.live) out += rest;
    }
    return out;
  }

  /** The answer ended: its last line, and the end of a code block whose fence never closed. */
  end(): string {
    let out = this.pending === '' ? '' : this.erase(this.pending) + this.line(this.pending);
    this.pending = '';
    this.column = 0;
    if (this.fence) {
      out += `${this.pal.dim('└─')}\n`;
      this.fence = undefined;
    }
    return out;
  }

  /** Renders a whole document (tests, a message that came in one piece). */
  static render(text: string, pal: Palette, width?: number): string {
    const md = new MarkdownStream(pal, width);
    return md.push(text) + md.end();
  }

  /** Live: back to where the shown text of the line began, and the screen cleared from there. */
  private erase(shown: string): string {
    if (!this.live || shown === '') return '';
    const rows = Math.floor((this.column + shown.length - 1) / this.width);
    return `${rows > 0 ? `\u001b[${rows}A` : ''}\u001b[${this.column + 1}G\u001b[J`;
  }

  private line(raw: string): string {
    const { pal } = this;
    const fence = FENCE.exec(raw);
    if (this.fence) {
      if (fence && fence[2]?.startsWith(this.fence.marker) && raw.trim() === fence[2]) {
        this.fence = undefined;
        return `${pal.dim('└─')}\n`;
      }
      // Each line highlighted alone, as it comes: a construct over several lines (a block
      // comment) loses its colour after its first line, the price of showing code as it streams.
      return `${pal.dim('│')} ${pal.enabled ? highlightCode(raw, this.fence.lang) : raw}\n`;
    }
    if (fence) {
      const lang = (fence[3] ?? '').toLowerCase();
      this.fence = { marker: fence[2] ?? '```', lang };
      return `${pal.dim(`┌─${lang ? ` ${lang} ` : ''}`)}\n`;
    }
    const heading = /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(raw);
    if (heading) {
      const text = renderInline(heading[2] ?? '', pal);
      return `${heading[1] === '#' ? pal.bold(underline(pal, text)) : pal.bold(text)}\n`;
    }
    if (/^\s{0,3}([-*_])(\s*\1){2,}\s*$/.test(raw)) return `${pal.dim('─'.repeat(Math.min(this.width, 40)))}\n`;
    const bullet = /^(\s*)[-*+]\s+(\[[ xX]\]\s+)?(.*)$/.exec(raw);
    if (bullet) {
      const box = bullet[2] ? (/x/i.test(bullet[2]) ? '☑ ' : '☐ ') : '';
      return `${bullet[1] ?? ''}${pal.dim('•')} ${box}${renderInline(bullet[3] ?? '', pal)}\n`;
    }
    const numbered = /^(\s*)(\d+[.)])\s+(.*)$/.exec(raw);
    if (numbered) return `${numbered[1] ?? ''}${pal.dim(numbered[2] ?? '')} ${renderInline(numbered[3] ?? '', pal)}\n`;
    const quote = /^\s{0,3}>\s?(.*)$/.exec(raw);
    if (quote) return `${pal.dim('│')} ${italic(pal, renderInline(quote[1] ?? '', pal))}\n`;
    return `${renderInline(raw, pal)}\n`;
  }
}
