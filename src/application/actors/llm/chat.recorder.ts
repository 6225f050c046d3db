/**
 * How a chat turn's tool calls reach its client: each call is a `tool-call` artifact (a data part,
 * replaced as the call progresses: running, done, failed, denied…), a command's output streams as
 * it comes into a `tool-output` artifact of its own (kept with the task, up to KEPT_OUTPUT_BYTES),
 * and a call that needs a person puts the turn in input-required with what it would do — the
 * diff against the current file, or the exact command line and where it runs.
 */
import type { ActorTurn } from '../../ports/actor.port.ts';
import type { CommandOutputChunk, ToolPreview } from '../../ports/sandbox.port.ts';
import { OutputStream } from '../../agent/output-stream.ts';
import { argSummary, previewFields } from '../../plans/tool-call-preview.ts';
import type { AgentRecorder, AgentTool, CallEvent, NotRunState, ToolOutcome } from '../../agent/agent.types.ts';
import type { PolicyVerdict } from '../../../domain/plan/policy.ts';
import type { ApprovalRequest } from '../../../domain/plan/approval-request.ts';

interface RunningCall {
  artifactId: string;
  output: OutputStream;
}

export class ChatRecorder implements AgentRecorder {
  private count: number;

  private readonly turn: Pick<ActorTurn, 'artifact'>;

  constructor(turn: Pick<ActorTurn, 'artifact' | 'task'>) {
    this.turn = turn;
    this.count = (turn.task.artifacts ?? []).filter((a) => a.name === 'tool-call').length;
  }

  async notRun(e: CallEvent & { state: NotRunState; summary: string; hook?: string | undefined }): Promise<void> {
    await this.event(e, { state: e.state, ok: false, summary: e.summary, ...(e.hook ? { hook: e.hook } : {}) });
  }

  async started(e: CallEvent & { tool: AgentTool }): Promise<RunningCall> {
    const artifactId = await this.event(e, { state: 'running' });
    const output = new OutputStream((a, o) => this.turn.artifact(a, o), {
      artifactId: artifactId.replace('tool-call', 'tool-output'),
      name: 'tool-output',
      metadata: { kind: 'tool-output', toolCall: artifactId },
    });
    return { artifactId, output };
  }

  output(handle: unknown, chunk: CommandOutputChunk): void {
    (handle as RunningCall).output.push(chunk);
  }

  async finished(
    e: CallEvent & { tool: AgentTool; outcome: ToolOutcome; durationMs: number },
    handle: unknown,
  ): Promise<void> {
    const h = handle as RunningCall;
    await h.output.close();
    const o = e.outcome;
    await this.event(
      e,
      {
        state: o.ok ? 'done' : 'failed',
        ok: o.ok,
        summary: o.summary,
        durationMs: e.durationMs,
        ...(o.filesTouched?.length ? { filesTouched: o.filesTouched } : {}),
        ...(o.exitCode !== undefined ? { exitCode: o.exitCode } : {}),
        ...(o.commandOutput ? { outputBytes: o.commandOutput.bytes, outputTruncated: o.commandOutput.truncated } : {}),
        ...(e.verdict ? { policy: e.verdict.reason } : {}),
      },
      h.artifactId,
    );
  }

  /** A tool call as clients see it: a `tool-call` artifact (a data part), replaced as it progresses. */
  private async event(e: CallEvent, fields: Record<string, unknown>, artifactId?: string): Promise<string> {
    const id = artifactId ?? `tool-call-${++this.count}`;
    await this.turn.artifact({
      artifactId: id,
      name: 'tool-call',
      parts: [
        { data: { tool: e.ref, callId: e.call.id, arguments: e.args, ...fields }, mediaType: 'application/json' },
      ],
      metadata: { kind: 'tool-call' },
    });
    return id;
  }
}

/** The approval request of a chat call, and the question a person reads. */
export function approvalRequest(
  e: { ref: string; args: Record<string, unknown>; preview: ToolPreview; verdict?: PolicyVerdict | undefined },
  problem: string | undefined,
): { question: string; request: ApprovalRequest } {
  const p = e.preview;
  const request: ApprovalRequest = {
    kind: 'tool-call',
    tool: e.ref,
    args: e.args,
    ...previewFields(e.ref, e.args, p),
    ...(p.problem !== undefined ? { previewProblem: p.problem } : {}),
    ...(e.verdict ? { policy: e.verdict } : {}),
    options: ['approve', 'always', 'reject', 'reject-with-guidance'],
  };
  const what =
    p.command !== undefined
      ? `Run \`${p.command}\` in ${p.cwd && p.cwd !== '.' ? p.cwd : 'the project root'} (${e.ref})?`
      : `Allow ${e.ref} ${argSummary(e.args)}?`;
  const shown = p.diff ? `\n${p.diff.trimEnd()}\n` : p.problem ? ` (${p.problem})` : '';
  const question = `${what}${shown} (yes / always / no / a sentence of guidance)`;
  return { question: problem ? `${problem}\n${question}` : question, request };
}
