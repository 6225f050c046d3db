/** The server token: the bootstrap administrator's key, given (`--token`, CLEVERAGENTS_SERVER_TOKEN), stored or made. */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { MIN_TOKEN_LENGTH } from '../protocol/server/auth.ts';
import { tokenFile } from './paths.ts';
import { StartupError } from './startup-errors.ts';

export function checkToken(token: string, source: string): void {
  if (token.length < MIN_TOKEN_LENGTH) {
    throw new StartupError(
      `the server token from ${source} is too short: it must be at least ${MIN_TOKEN_LENGTH} characters (got ${token.length})`,
      `use a longer random token (e.g. openssl rand -base64 32), or omit ${source} to have one generated`,
    );
  }
  if (/\s/.test(token))
    throw new StartupError(
      `the server token from ${source} contains white space`,
      'use a token without spaces or line breaks',
    );
}

/** The given token, else the stored token, else a new one (0600 file). */
export function resolveToken(
  given: string | undefined,
  dataDir: string,
): { token: string; file?: string; generated: boolean } {
  if (given) return { token: given, generated: false };
  const file = tokenFile(dataDir);
  if (existsSync(file)) {
    const token = readFileSync(file, 'utf8').trim();
    if (token.length < MIN_TOKEN_LENGTH || /\s/.test(token)) {
      throw new StartupError(
        `the stored server token in ${file} is unusable (empty, too short or with white space)`,
        'delete the file to have a new token generated, or pass --token',
      );
    }
    return { token, file, generated: false };
  }
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const token = randomBytes(32).toString('base64url');
  writeFileSync(file, `${token}\n`, { mode: 0o600, flag: 'wx' });
  return { token, file, generated: true };
}
