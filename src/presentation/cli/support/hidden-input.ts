import { UsageError } from '../exit-codes.ts';
import type { CliIo } from '../render/ui.ts';

export interface HiddenInputOptions {
  /** What a terminal is asked (on stderr), e.g. `API key: `. */
  prompt: string;
  /** From a pipe: `line` takes the first line; `all` takes everything (a multi-line value). */
  pipe: 'line' | 'all';
  /** The most bytes read from a pipe; more is refused (never silently cut). */
  maxBytes: number;
  /** What the refusal of a larger value calls it ("the value", "the key"). */
  what: string;
}

/**
 * Something the user must not have to put on a command line (where `ps` and the shell's history
 * would keep it): typed at a terminal without echo, or piped on stdin.
 */
export async function readHidden(io: CliIo, signal: AbortSignal, opts: HiddenInputOptions): Promise<string> {
  const stdin = io.stdin;
  if (stdin.isTTY !== true) {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of stdin) {
      const buf = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
      chunks.push(buf);
      size += buf.length;
      if (size > opts.maxBytes) break;
    }
    const text = Buffer.concat(chunks).toString('utf8');
    if (opts.pipe === 'line') return text.split('\n')[0] ?? '';
    if (size > opts.maxBytes)
      throw new UsageError(
        `${opts.what} on stdin is larger than ${Math.floor(opts.maxBytes / 1024)} KiB`,
        'pipe a smaller value',
      );
    return text;
  }
  io.stderr.write(opts.prompt);
  const tty = stdin as NodeJS.ReadStream;
  return new Promise<string>((resolve, reject) => {
    let value = '';
    const done = (err?: Error): void => {
      tty.setRawMode(false);
      tty.off('data', onData);
      signal.removeEventListener('abort', onAbort);
      tty.pause();
      io.stderr.write('\n');
      if (err) reject(err);
      else resolve(value);
    };
    const onAbort = (): void => done(new UsageError('cancelled'));
    const onData = (buf: Buffer): void => {
      for (const ch of buf.toString('utf8')) {
        if (ch === '\r' || ch === '\n') return done();
        if (ch === '\u0003') return done(new UsageError('cancelled'));
        if (ch === '\u007f' || ch === '\b') value = value.slice(0, -1);
        else value += ch;
      }
    };
    signal.addEventListener('abort', onAbort);
    tty.setRawMode(true);
    tty.resume();
    tty.on('data', onData);
  });
}
