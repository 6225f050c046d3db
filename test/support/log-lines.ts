/** Server mode's stderr: its log, one JSON object (pino) per line. */

/** One line of the server's log (pino): `level`, `msg`, `time`, `pid` and the line's own fields. */
export type LogLine = Record<string, unknown> & { level: number; msg: string };

/**
 * The one log line a server that could not start printed: its start-up error, whose text is `msg`
 * and whose hint is a field (exit code 2).
 */
export function startupErrorLine(stderr: string): LogLine & { hint: string } {
  const lines = parseLogLines(stderr);
  if (lines.length !== 1 || lines[0]?.['type'] !== 'StartupError' || typeof lines[0]['hint'] !== 'string')
    throw new Error(`expected one start-up error line with a hint, got:\n${stderr}`);
  return lines[0] as LogLine & { hint: string };
}

/** Server mode's stderr as log lines; throws naming the first line that is not a JSON object. */
export function parseLogLines(stderr: string): LogLine[] {
  return stderr
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(line);
      } catch {
        throw new Error(`a server log line is not JSON: ${line}`);
      }
      if (typeof parsed !== 'object' || parsed === null || typeof (parsed as { msg?: unknown }).msg !== 'string')
        throw new Error(`a server log line is not a log object: ${line}`);
      return parsed as LogLine;
    });
}
