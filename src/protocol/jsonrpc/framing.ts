/**
 * Newline-delimited JSON framing: one message per line, UTF-8. Kept behind this small interface so
 * an official A2A stdio binding can replace it.
 */
export interface LineFramer {
  /** Feeds raw bytes; calls `onLine` per complete line and `onOversize` for a line past the limit. */
  push(chunk: Buffer): void;
  /** Whatever is left when the stream ends (a last line without a newline). */
  flush(): void;
}

export function createLineFramer(
  onLine: (line: string) => void,
  onOversize: (bytes: number) => void,
  maxLineBytes: number,
): LineFramer {
  let parts: Buffer[] = [];
  let size = 0;
  let skipping = false;
  const emit = (buf: Buffer): void => {
    const line = buf.toString('utf8').replace(/\r$/, '');
    if (line.trim().length > 0) onLine(line);
  };
  return {
    push(chunk) {
      let start = 0;
      for (let nl = chunk.indexOf(10, start); nl !== -1; nl = chunk.indexOf(10, start)) {
        const piece = chunk.subarray(start, nl);
        start = nl + 1;
        if (skipping) {
          skipping = false;
          parts = [];
          size = 0;
          continue;
        }
        if (size + piece.length > maxLineBytes) {
          onOversize(size + piece.length);
          parts = [];
          size = 0;
          continue;
        }
        parts.push(piece);
        emit(parts.length === 1 ? piece : Buffer.concat(parts));
        parts = [];
        size = 0;
      }
      if (start < chunk.length && !skipping) {
        const rest = chunk.subarray(start);
        size += rest.length;
        if (size > maxLineBytes) {
          onOversize(size);
          skipping = true;
          parts = [];
          size = 0;
        } else {
          parts.push(Buffer.from(rest));
        }
      }
    },
    flush() {
      if (!skipping && parts.length > 0) emit(Buffer.concat(parts));
      parts = [];
      size = 0;
    },
  };
}

/** Serialises one message as a line. */
export const frame = (msg: unknown): string => `${JSON.stringify(msg)}\n`;
