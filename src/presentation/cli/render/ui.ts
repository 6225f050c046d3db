import { colorEnabled, palette, type Palette } from './colors.ts';
import type { EnvelopeMessage, MessageLevel } from './envelope.render.ts';
import { isMachineFormat, type OutputFormat } from './format.ts';

/** The process streams a command writes to (the real ones, or fakes in tests). */
export interface CliIo {
  stdout: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
}

/**
 * Output of one command in one format. In json/yaml mode nothing is written until the envelope;
 * `info`/`warn` are collected into its `messages`. In rich/plain mode the command writes as it goes.
 */
export class Ui {
  readonly messages: EnvelopeMessage[] = [];
  /** Styling for stdout and for stderr (each is coloured only when it is a terminal). */
  readonly pal: Palette;
  readonly errPal: Palette;

  readonly format: OutputFormat;
  private readonly io: CliIo;

  constructor(format: OutputFormat, io: CliIo, noColor: boolean) {
    this.format = format;
    this.io = io;
    const rich = format === 'rich';
    this.pal = palette(rich && colorEnabled({ disabled: noColor, isTTY: io.stdout.isTTY === true, env: io.env }));
    this.errPal = palette(rich && colorEnabled({ disabled: noColor, isTTY: io.stderr.isTTY === true, env: io.env }));
  }

  /** rich or plain: the command prints for people as it goes. */
  get human(): boolean {
    return !isMachineFormat(this.format);
  }

  get rich(): boolean {
    return this.format === 'rich';
  }

  /** Terminal width, when stdout is one. */
  get width(): number | undefined {
    const cols = this.io.stdout.columns;
    return this.io.stdout.isTTY && cols !== undefined && cols > 0 ? cols : undefined;
  }

  /** Rendering options for stdout. */
  get mode(): { rich: boolean; pal: Palette; width: number | undefined } {
    return { rich: this.rich, pal: this.pal, width: this.width };
  }

  /** Writes to stdout (people's formats only), immediately. */
  out(text: string): void {
    if (this.human && text) this.io.stdout.write(text);
  }

  /** Writes to stderr (people's formats only). */
  err(text: string): void {
    if (this.human && text) this.io.stderr.write(text);
  }

  /** Writes to stderr whatever the format (errors of json mode go in the envelope instead). */
  rawErr(text: string): void {
    this.io.stderr.write(text);
  }

  /** A side remark: into the envelope; on stderr in rich mode only (plain output stays terse). */
  info(text: string): void {
    this.note('info', text, this.rich);
  }

  /**
   * What a command did when it has nothing else to show (no changes, nothing to prune, logged in):
   * into the envelope; on stderr in rich and plain mode, as a bare line (stdout stays the data).
   */
  done(text: string): void {
    this.messages.push({ level: 'info', text });
    if (this.human) this.io.stderr.write(`${this.rich ? this.errPal.dim(text) : text}\n`);
  }

  /** Something the user should know: into the envelope; on stderr in rich and plain mode. */
  warn(text: string): void {
    this.note('warn', text, true);
  }

  private note(level: MessageLevel, text: string, show: boolean): void {
    this.messages.push({ level, text });
    if (!this.human || !show) return;
    const line = !this.rich
      ? `${level}: ${text}`
      : level === 'warn'
        ? this.errPal.yellow(`warning: ${text}`)
        : this.errPal.dim(text);
    this.io.stderr.write(`${line}\n`);
  }
}
