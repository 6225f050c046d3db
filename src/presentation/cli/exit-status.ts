/**
 * A run's exit code, and how what ends it outside a command's own run is reported: a usage error
 * found by the parser, and `agents serve` failing. Apart from the Runner so that `agents serve`
 * (presentation/cli/serve-cli.ts) parses its flags without the client commands' modules.
 */
import { CommanderError, type Command } from 'commander';
import type { GlobalFlags } from './config.ts';
import { EXIT_CODES, exitReasonOf, UsageError } from './exit-codes.ts';
import type * as Envelope from './render/envelope.render.ts';
import type { EnvelopeMessage } from './render/envelope.render.ts';
import { renderError, reportOf } from './render/error.render.ts';
import { isOutputFormat, type OutputFormat } from './render/format.ts';
import { Ui, type CliIo } from './render/ui.ts';

/** The envelope's writer (and with it the YAML library), loaded only when an envelope is written. */
const envelopes = (): Promise<typeof Envelope> => import('./render/envelope.render.ts');

export class ExitStatus {
  exitCode = 0;

  readonly io: CliIo;

  constructor(io: CliIo) {
    this.io = io;
  }

  /**
   * `agents serve` could not start (or stopped on an error): one line and a hint on stderr, or the
   * envelope under --format json|yaml — on stderr in --stdio mode, whose stdout carries protocol only.
   */
  async serveFailed(cmd: Command, err: unknown, stdoutIsProtocol: boolean): Promise<void> {
    const flags = cmd.optsWithGlobals<GlobalFlags>();
    const format: OutputFormat = isOutputFormat(flags.format)
      ? flags.format
      : this.io.stderr.isTTY === true
        ? 'rich'
        : 'plain';
    const ui = new Ui(format, this.io, flags.color === false);
    const reason = exitReasonOf(err);
    const report = reportOf(err, reason, { kind: 'local' });
    const code = EXIT_CODES[reason];
    if (ui.human) {
      if (!(err instanceof UsageError && err.logged))
        ui.rawErr(renderError(report, reason, { rich: ui.rich, pal: ui.errPal }));
    } else {
      const { buildEnvelope, serializeEnvelope } = await envelopes();
      const messages: EnvelopeMessage[] = [{ level: 'error', text: report.message }];
      if (report.hint) messages.push({ level: 'hint', text: report.hint });
      const text = serializeEnvelope(
        buildEnvelope('serve', code, { error: report }, new Date(), 0, messages),
        format as 'json' | 'yaml',
      );
      (stdoutIsProtocol ? this.io.stderr : this.io.stdout).write(text);
    }
    this.exitCode = code;
  }

  /** A usage error found by the parser: stderr got commander's text; json/yaml also get an envelope. */
  async usage(program: Command, args: readonly string[], message: string): Promise<void> {
    this.exitCode = EXIT_CODES.USAGE;
    const format = formatFromArgv(args);
    if (format !== 'json' && format !== 'yaml') return;
    const { buildEnvelope, serializeEnvelope } = await envelopes();
    const env = buildEnvelope(
      commandPath(program, args),
      EXIT_CODES.USAGE,
      { error: { message, type: 'UsageError' } },
      new Date(),
      0,
      [{ level: 'error', text: message }],
    );
    this.io.stdout.write(serializeEnvelope(env, format));
  }
}

/**
 * Parses `argv` (as `process.argv`) with `program` and returns the exit code its commands set
 * on `status`; a parser error is a usage error, help and version asked for are successes.
 */
export async function runProgram(program: Command, status: ExitStatus, argv: string[]): Promise<number> {
  try {
    await program.parseAsync(argv);
  } catch (err) {
    if (!(err instanceof CommanderError)) throw err;
    // Help and version asked for (or `agents help x`) are successes; `agents` alone is a usage error.
    if (err.exitCode === 0) return EXIT_CODES.OK;
    await status.usage(program, argv.slice(2), err.message.replace(/^error: /, ''));
  }
  return status.exitCode;
}

/** The command the arguments name (`task get`), as far as they name one. */
function commandPath(program: Command, args: readonly string[]): string {
  const path: string[] = [];
  let cmd = program;
  for (const a of args) {
    const sub = cmd.commands.find((c) => c.name() === a);
    if (!sub) continue;
    path.push(a);
    cmd = sub;
  }
  return path.join(' ') || program.name();
}

/** `--format X` / `--format=X` from raw arguments, for errors raised before parsing completes. */
function formatFromArgv(argv: readonly string[]): OutputFormat | undefined {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] ?? '';
    const v = a === '--format' ? argv[i + 1] : a.startsWith('--format=') ? a.slice('--format='.length) : undefined;
    if (isOutputFormat(v)) return v;
  }
  return undefined;
}
