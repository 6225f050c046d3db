import { AppError } from '../errors.ts';

/**
 * Splits a command line into words as a POSIX shell would for quoting ('…', "…", backslash), without
 * expanding anything: no variables, globs, pipes or redirections — the words are run as they are.
 */
export function splitCommandLine(line: string): string[] {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let quote: "'" | '"' | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i] as string;
    if (quote === "'") {
      if (c === "'") quote = undefined;
      else word += c;
      continue;
    }
    if (quote === '"') {
      if (c === '"') quote = undefined;
      else if (c === '\\' && i + 1 < line.length && '"\\$`'.includes(line[i + 1] as string)) word += line[++i];
      else word += c;
      continue;
    }
    if (c === "'" || c === '"') {
      quote = c;
      inWord = true;
    } else if (c === '\\' && i + 1 < line.length) {
      word += line[++i];
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (quote)
    throw new AppError('INVALID_PARAMS', `unterminated ${quote} quote in the command line`, {
      fields: [{ field: 'command', description: 'close every quote' }],
    });
  if (inWord) words.push(word);
  return words;
}
