/**
 * Markdown for a terminal, as it streams: each line is shown once it is whole (headings, lists,
 * quotes, rules, and inline bold, italic, code and links through marked's inline lexer); a fenced
 * code block is shown, highlighted, when its fence closes. Plain output never comes here.
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

/** A markdown answer rendered line by line as its text streams in. */
export class MarkdownStream {
  private pending = '';
  private fence: { marker: string; lang: string; lines: string[] } | undefined;
  private readonly pal: Palette;
  private readonly width: number;

  constructor(pal: Palette, width = 80) {
    this.pal = pal;
    this.width = Math.max(20, Math.min(width, 100));
  }

  /** Takes a chunk of the answer; returns what is now whole, rendered (maybe nothing). */
  push(chunk: string): string {
    this.pending += chunk;
    let out = '';
    let nl = this.pending.indexOf('\n');
    while (nl >= 0) {
      out += this.line(this.pending.slice(0, nl));
      this.pending = this.pending.slice(nl + 1);
      nl = this.pending.indexOf('\n');
    }
    return out;
  }

  /** The answer ended: its last line, and a code block whose fence never closed (highlighted all the same). */
  end(): string {
    let out = this.pending === '' ? '' : this.line(this.pending);
    this.pending = '';
    if (this.fence) {
      out += this.code(this.fence.lines, this.fence.lang);
      this.fence = undefined;
    }
    return out;
  }

  /** Renders a whole document (tests, a message that came in one piece). */
  static render(text: string, pal: Palette, width?: number): string {
    const md = new MarkdownStream(pal, width);
    return md.push(text) + md.end();
  }

  private line(raw: string): string {
    const { pal } = this;
    const fence = FENCE.exec(raw);
    if (this.fence) {
      if (fence && fence[2]?.startsWith(this.fence.marker) && raw.trim() === fence[2]) {
        const done = this.code(this.fence.lines, this.fence.lang);
        this.fence = undefined;
        return done;
      }
      this.fence.lines.push(raw);
      return '';
    }
    if (fence) {
      this.fence = { marker: fence[2] ?? '```', lang: (fence[3] ?? '').toLowerCase(), lines: [] };
      return '';
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

  /** A code block: indented under a dim rule naming its language, highlighted when the language is known. */
  private code(lines: readonly string[], lang: string): string {
    const { pal } = this;
    const body = pal.enabled ? highlightCode(lines.join('\n'), lang) : lines.join('\n');
    const shown = body === '' ? [] : body.split('\n');
    const top = pal.dim(`┌─${lang ? ` ${lang} ` : ''}`);
    return `${top}\n${shown.map((l) => `${pal.dim('│')} ${l}`).join('\n')}${shown.length > 0 ? '\n' : ''}${pal.dim('└─')}\n`;
  }
}
