/**
 * `node test/support/cli-trace-check.ts --reset | --check`: `npm test` resets the trace before
 * the suites and checks it after. The end-to-end suites run the real CLI with CLEVERAGENTS_CLI_TRACE
 * set (test/support/cli.ts), so the trace holds every method each command really called; a command
 * can call only what COMMAND_METHODS declares (the CLI refuses anything else), and this check fails
 * when a command was seen to call a method it does not declare, or when no suite ran a command the
 * table lists. A declared method no run called is printed (it may be on a path the suites do not take).
 */
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { COMMAND_METHODS, SERVER_COMMANDS } from '../../src/presentation/cli/command-methods.ts';
import { CLI_TRACE_DIR } from './cli.ts';

function check(): { problems: string[]; notes: string[] } {
  if (!existsSync(CLI_TRACE_DIR))
    return { problems: ['no trace was recorded: run the end-to-end suites first'], notes: [] };
  const seen = new Map<string, Set<string>>();
  for (const f of readdirSync(CLI_TRACE_DIR))
    for (const line of readFileSync(join(CLI_TRACE_DIR, f), 'utf8').split('\n')) {
      const [command, method] = line.split('\t');
      if (!command) continue;
      let s = seen.get(command);
      if (!s) seen.set(command, (s = new Set()));
      if (method) s.add(method);
    }
  const problems: string[] = [];
  const notes: string[] = [];
  for (const [command, declared] of Object.entries(COMMAND_METHODS)) {
    if (SERVER_COMMANDS.includes(command)) continue;
    const called = seen.get(command);
    if (!called) {
      problems.push(`"${command}" was not run by any end-to-end suite`);
      continue;
    }
    // A method called only on a path the suites do not take (a terminal prompt, a fallback) is a note.
    for (const m of declared) if (!called.has(m)) notes.push(`"${command}" may call ${m}; no run of it did`);
    for (const m of called)
      if (!declared.includes(m)) problems.push(`"${command}" called ${m}, which it does not declare`);
  }
  return { problems, notes };
}

const mode = process.argv[2];
if (mode === '--reset') rmSync(CLI_TRACE_DIR, { recursive: true, force: true });
else if (mode === '--check') {
  const { problems, notes } = check();
  if (notes.length > 0) process.stdout.write(`not seen in the end-to-end runs:\n  ${notes.join('\n  ')}\n`);
  if (problems.length > 0) {
    process.stderr.write(`COMMAND_METHODS does not match what the commands call:\n  ${problems.join('\n  ')}\n`);
    process.exitCode = 1;
  } else
    process.stdout.write(`COMMAND_METHODS matches what the ${Object.keys(COMMAND_METHODS).length} commands called\n`);
}
// Without a mode it does nothing: `node --test` loads every file under test/, this one too.
