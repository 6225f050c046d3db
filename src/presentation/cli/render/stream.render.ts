import { shownOutput, type Message, type StreamResponse, type Task } from '../../../protocol/client/index.ts';
import {
  foldEvent,
  messageText,
  messageWords,
  partsText,
  shortTime,
  stateWord,
  styleState,
  toolCallLine,
  hookRunLine,
  hookRunOf,
  isCommandOutput,
  toolCallOf,
} from './task.render.ts';
import type { Ui } from './ui.ts';

/** Shapes the answer's text as it streams (markdown on a terminal): whole lines out, the rest held until `end`. */
export interface TextView {
  push(chunk: string): string;
  end(): string;
}

export interface StreamedEvent {
  seq: number;
  event: StreamResponse;
}

/**
 * Prints a task's stream as it arrives and keeps the folded task and the events for the envelope.
 * `answer` (send, chat): stdout carries only the agent's text, chunk by chunk; status remarks go
 * to stderr in rich mode. `events` (task watch): one line per event.
 */
export class StreamPrinter {
  readonly events: StreamedEvent[] = [];
  task: Task | undefined;
  message: Message | undefined;
  private lineOpen = false;
  /** A command's output line is open on stderr. */
  private outputOpen = false;
  private lastArtifact: string | undefined;

  private readonly ui: Ui;
  private readonly style: 'answer' | 'events';
  private readonly view: TextView | undefined;

  constructor(ui: Ui, style: 'answer' | 'events', view?: TextView) {
    this.ui = ui;
    this.style = style;
    this.view = view;
  }

  push(seq: number, event: StreamResponse): void {
    this.events.push({ seq, event });
    this.task = foldEvent(this.task, event);
    if ('message' in event) this.message = event.message;
    if (this.ui.human) this.print(seq, event);
  }

  /** Ends an open line of streamed text. */
  end(): void {
    const held = this.view?.end() ?? '';
    if (held) this.ui.out(held);
    if (this.lineOpen) this.ui.out('\n');
    this.lineOpen = false;
    if (this.outputOpen) this.ui.err('\n');
    this.outputOpen = false;
  }

  /**
   * A command's output as it comes (a tool's `tool-output`, a plan step's `command-output`): on
   * stderr, like the tool lines, so stdout keeps only the answer; without the control sequences a
   * sandboxed command could aim at the terminal; indented under its tool line on a terminal.
   */
  private commandOutput(text: string): void {
    const { ui } = this;
    if (this.lineOpen) {
      ui.out('\n');
      this.lineOpen = false;
    }
    const shown = shownOutput(text);
    if (shown === '') return;
    const indent = ui.rich ? '    ' : '';
    const lines = shown.split('\n');
    const out = lines
      .map((l, i) => (i === 0 && this.outputOpen ? l : i === lines.length - 1 && l === '' ? '' : `${indent}${l}`))
      .join('\n');
    ui.err(ui.rich ? ui.errPal.dim(out) : out);
    this.outputOpen = !shown.endsWith('\n');
  }

  /** The state the stream ended in. */
  get state(): string | undefined {
    return this.task?.status.state;
  }

  private print(seq: number, ev: StreamResponse): void {
    const { ui } = this;
    const plainEvents = this.style === 'events' && !ui.rich;
    if ('artifactUpdate' in ev) {
      const { artifact, append } = ev.artifactUpdate;
      const call = toolCallOf(artifact);
      const run = call ? undefined : hookRunOf(artifact);
      if ((call || run) && !plainEvents) {
        // Tool calls and hook runs are remarks about the answer, not part of it: stderr in answer style.
        this.end();
        const line = call ? toolCallLine(call) : run ? hookRunLine(run) : '';
        if (this.style === 'events') return ui.out(`${line}\n`);
        return ui.err(`${ui.rich ? ui.errPal.dim(`  ${line}`) : call ? `tool: ${line}` : line}\n`);
      }
      const text = partsText(artifact.parts);
      if (isCommandOutput(artifact) && !plainEvents) return this.commandOutput(text);
      if (plainEvents) return ui.out(`${seq}\tartifact\t${artifact.artifactId}\t${JSON.stringify(text)}\n`);
      if (this.lineOpen && (artifact.artifactId !== this.lastArtifact || !append)) this.end();
      this.lastArtifact = artifact.artifactId;
      if (text && this.view) ui.out(this.view.push(text));
      else if (text) {
        ui.out(text);
        this.lineOpen = !text.endsWith('\n');
      }
      return;
    }
    if ('message' in ev) {
      this.end();
      const text = messageText(ev.message) ?? '';
      if (this.view && !plainEvents) return ui.out(this.view.push(`${text}\n`) + this.view.end());
      return ui.out(plainEvents ? `${seq}\tmessage\t${JSON.stringify(text)}\n` : `${text}\n`);
    }
    if ('task' in ev) {
      const t = ev.task;
      if (plainEvents) return ui.out(`${seq}\ttask\t${t.id}\t${stateWord(t.status.state)}\n`);
      if (this.style === 'events')
        ui.err(`${ui.errPal.dim(`watching task ${t.id} (${stateWord(t.status.state)}); Ctrl-C stops watching`)}\n`);
      return;
    }
    const { state, message, timestamp } = ev.statusUpdate.status;
    const text = messageText(message);
    if (plainEvents) return ui.out(`${seq}\tstatus\t${stateWord(state)}\t${JSON.stringify(text ?? '')}\n`);
    if (this.style === 'events') {
      this.end();
      return ui.out(
        `${ui.pal.dim(shortTime(timestamp).slice(11))} ${styleState(state, ui.pal)}${text ? `  ${text}` : ''}\n`,
      );
    }
    const words = messageWords(message);
    if (ui.rich && words) {
      this.end();
      ui.err(`${ui.errPal.dim(`· ${stateWord(state)}: ${words}`)}\n`);
    }
  }
}
