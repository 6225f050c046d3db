/**
 * A2A → ACP, as pure functions: a turn's stream events become `session/update`s, its final task a
 * stop reason (or a permission to ask, or an error). No I/O here: the bridge feeds and sends.
 */
import { isAbsolute, join } from 'node:path';
import type {
  ContentBlock,
  PromptCapabilities,
  SessionUpdate,
  StopReason,
  ToolCallContent,
  ToolCallLocation,
  ToolCallStatus,
  ToolKind,
} from '@agentclientprotocol/sdk';
import {
  approvalRequestOf,
  type ApprovalRequest as ClientApprovalRequest,
  type Artifact,
  type Part,
  type StreamResponse,
  type Task,
} from '../../protocol/client/index.ts';
import {
  foldEvent,
  isCommandOutput,
  isHookArtifact,
  messageWords,
  partsText,
  toolCallOf,
  toolCallTitle,
  type ToolCallView,
} from '../cli/render/task.render.ts';

/** What an A2A tool call's `state` is in ACP. */
const TOOL_STATUS: Readonly<Record<string, ToolCallStatus>> = {
  running: 'in_progress',
  done: 'completed',
  failed: 'failed',
  declined: 'failed',
  denied: 'failed',
  invalid: 'failed',
};

/** Built-in tools by what an editor shows for them (icons, follow-along); MCP and others are `other`. */
const TOOL_KINDS: Readonly<Record<string, ToolKind>> = {
  'builtin/read-file': 'read',
  'builtin/list-files': 'search',
  'builtin/search-files': 'search',
  'builtin/git-status': 'read',
  'builtin/git-diff': 'read',
  'builtin/write-file': 'edit',
  'builtin/edit-file': 'edit',
  'builtin/replace': 'edit',
  'builtin/replace-in-files': 'edit',
  'builtin/run-command': 'execute',
};

export const toolKindOf = (tool: string): ToolKind => TOOL_KINDS[tool] ?? 'other';

/** A chat tool call's approval the turn stopped for (the client's typed request, with its tool known). */
export type ApprovalRequest = ClientApprovalRequest & {
  tool: string;
  args: Record<string, unknown>;
  options: string[];
};

/** How a turn's stream ended, for the bridge to act on. */
export type TurnEnd =
  | { kind: 'stop'; stopReason: StopReason }
  | { kind: 'approval'; taskId: string; request: ApprovalRequest; question: string }
  | { kind: 'question'; taskId: string; text: string }
  | { kind: 'failed'; message: string; hint?: string; errorKind?: string };

/**
 * Follows one prompt's A2A stream (and the streams that continue it after approvals) and says
 * which ACP updates each event makes. Text and tool calls already reported are not repeated, so a
 * stream that starts again with the task as it stands (after an approval) adds only what is new.
 */
export class TurnTranslator {
  task: Task | undefined;
  /** Characters of each text artifact already sent. */
  private readonly sentText = new Map<string, number>();
  /** Each tool-call artifact's ACP id and the last state sent for it. */
  private readonly calls = new Map<string, { id: string; state: string }>();
  /** The tool call a permission was asked for: its artifact, once it comes, keeps this id. */
  private asked: { id: string; tool: string } | undefined;
  /** The agent answered with a message of its own instead of a task. */
  private answered = false;

  /** `root`: where the session's tools work (relative paths in tool calls are resolved against it). */
  private readonly root?: string | undefined;

  constructor(root?: string) {
    this.root = root;
  }

  push(ev: StreamResponse): SessionUpdate[] {
    this.task = foldEvent(this.task, ev);
    if ('task' in ev) return (ev.task.artifacts ?? []).flatMap((a) => this.artifact(a, false));
    if ('artifactUpdate' in ev) return this.artifact(ev.artifactUpdate.artifact, ev.artifactUpdate.append === true);
    if ('statusUpdate' in ev) {
      const { state, message } = ev.statusUpdate.status;
      const words = messageWords(message);
      // Progress remarks while working (a fallback answering, a retry) are the agent's thoughts, not its answer.
      if (state === 'TASK_STATE_WORKING' && words)
        return [{ sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: `${words}\n` } }];
      return [];
    }
    if (!('message' in ev)) return [];
    this.answered = true;
    return this.text(`message:${ev.message.messageId}`, partsText(ev.message.parts), false);
  }

  /** The ACP tool call a permission request is about, announced as pending. */
  approvalCall(taskId: string, request: ApprovalRequest): SessionUpdate & { sessionUpdate: 'tool_call' } {
    const id = `${taskId}:approval:${this.calls.size + (this.asked ? 1 : 0)}`;
    this.asked = { id, tool: request.tool };
    return {
      sessionUpdate: 'tool_call',
      toolCallId: id,
      title: toolCallTitle({ tool: request.tool, arguments: request.args }),
      kind: toolKindOf(request.tool),
      status: 'pending',
      rawInput: request.args,
      ...this.locations({ arguments: request.args }),
      ...(request.preview ? { content: [textContent(request.preview)] } : {}),
    };
  }

  /** How the turn ended, from the task as the stream left it. */
  end(): TurnEnd {
    const task = this.task;
    if (!task)
      return this.answered
        ? { kind: 'stop', stopReason: 'end_turn' }
        : { kind: 'failed', message: 'the agent ended the turn without answering' };
    const { state, message } = task.status;
    const words = messageWords(message) ?? '';
    switch (state) {
      case 'TASK_STATE_COMPLETED':
        return { kind: 'stop', stopReason: /cut at maxTokens/.test(words) ? 'max_tokens' : 'end_turn' };
      case 'TASK_STATE_CANCELED':
        return { kind: 'stop', stopReason: 'cancelled' };
      case 'TASK_STATE_REJECTED':
        return { kind: 'stop', stopReason: 'refusal' };
      case 'TASK_STATE_INPUT_REQUIRED': {
        const request = approvalRequestOf(message);
        if (request?.tool !== undefined) {
          const { tool, args = {}, options = [] } = request;
          return { kind: 'approval', taskId: task.id, request: { ...request, tool, args, options }, question: words };
        }
        return { kind: 'question', taskId: task.id, text: words || 'The agent is waiting for your answer.' };
      }
      case 'TASK_STATE_FAILED': {
        const error = dataOf<{ kind?: string; message?: string; hint?: string }>(message?.parts, 'error');
        if (error?.kind === 'tool-step-limit') return { kind: 'stop', stopReason: 'max_turn_requests' };
        return {
          kind: 'failed',
          message: error?.message ?? (words || 'the turn failed'),
          ...(error?.hint ? { hint: error.hint } : {}),
          ...(error?.kind ? { errorKind: error.kind } : {}),
        };
      }
      default:
        return { kind: 'failed', message: `the turn stopped ${words ? `: ${words}` : `in state ${state}`}` };
    }
  }

  private artifact(a: Artifact, append: boolean): SessionUpdate[] {
    if (isHookArtifact(a)) return [];
    const call = toolCallOf(a);
    if (call) return this.toolCall(a.artifactId, call);
    // A command's output is the tool's, not the answer: the editor shows the tool call's summary.
    if (a.name === 'tool-call' || isCommandOutput(a)) return [];
    return this.text(a.artifactId, partsText(a.parts), append);
  }

  private text(key: string, text: string, append: boolean): SessionUpdate[] {
    const sent = this.sentText.get(key) ?? 0;
    const fresh = append ? text : text.slice(sent);
    this.sentText.set(key, append ? sent + text.length : Math.max(sent, text.length));
    if (!fresh) return [];
    return [{ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: fresh } }];
  }

  private toolCall(artifactId: string, call: ToolCallView): SessionUpdate[] {
    const known = this.calls.get(artifactId);
    if (known?.state === call.state) return [];
    const status = TOOL_STATUS[call.state] ?? 'in_progress';
    const settled = call.state !== 'running';
    const content: ToolCallContent[] = settled && call.summary ? [textContent(call.summary)] : [];
    const rawOutput = settled
      ? {
          rawOutput: {
            state: call.state,
            ok: call.ok ?? false,
            ...(call.summary !== undefined ? { summary: call.summary } : {}),
            ...(call.durationMs !== undefined ? { durationMs: call.durationMs } : {}),
            ...(call.filesTouched ? { filesTouched: call.filesTouched } : {}),
          },
        }
      : {};
    if (known) {
      known.state = call.state;
      return [
        {
          sessionUpdate: 'tool_call_update',
          toolCallId: known.id,
          status,
          ...(content.length ? { content } : {}),
          ...this.locations(call),
          ...rawOutput,
        },
      ];
    }
    const asked = this.asked?.tool === call.tool ? this.asked : undefined;
    // The model's call ids repeat across steps with some providers; artifact ids are unique in a task.
    const id = asked?.id ?? `${this.task?.id ?? 'turn'}/${artifactId}`;
    this.asked = asked ? undefined : this.asked;
    this.calls.set(artifactId, { id, state: call.state });
    const fields = {
      toolCallId: id,
      title: toolCallTitle(call),
      kind: toolKindOf(call.tool),
      status,
      rawInput: call.arguments,
      ...(content.length ? { content } : {}),
      ...this.locations(call),
      ...rawOutput,
    };
    // The permission request announced it already: from here on it is updated.
    return [asked ? { sessionUpdate: 'tool_call_update', ...fields } : { sessionUpdate: 'tool_call', ...fields }];
  }

  /** The files a call reads or changes, as absolute paths (an editor follows them). */
  private locations(call: Pick<ToolCallView, 'arguments' | 'filesTouched'>): { locations?: ToolCallLocation[] } {
    const paths = new Set<string>(call.filesTouched ?? []);
    const args = call.arguments;
    if (args && typeof args === 'object' && typeof (args as { path?: unknown }).path === 'string')
      paths.add((args as { path: string }).path);
    const root = this.root;
    const located = [...paths]
      .map((p) => (isAbsolute(p) ? p : root ? join(root, p) : undefined))
      .filter((p): p is string => p !== undefined);
    return located.length ? { locations: located.map((path) => ({ path })) } : {};
  }
}

const textContent = (text: string): ToolCallContent => ({ type: 'content', content: { type: 'text', text } });

/** The value of a `{key: …}` data part among `parts`. */
function dataOf<T>(parts: readonly Part[] | undefined, key: string): T | undefined {
  for (const p of parts ?? [])
    if (p.data && typeof p.data === 'object' && key in p.data) return (p.data as Record<string, T>)[key];
  return undefined;
}

/** A prompt content block the backend cannot take, with why. */
export class UnsupportedContentError extends Error {}

/**
 * An ACP prompt as A2A parts: text as text; a resource link and an embedded text resource as text
 * naming it (the agent's models read text); an image only when the backend takes images.
 */
export function promptParts(blocks: readonly ContentBlock[], caps: PromptCapabilities): Part[] {
  return blocks.map((b): Part => {
    switch (b.type) {
      case 'text':
        return { text: b.text };
      case 'resource_link':
        return { text: `[${b.title ?? b.name}](${b.uri})` };
      case 'resource': {
        const r = b.resource;
        if ('text' in r) return { text: `Context from ${r.uri}:\n\`\`\`\n${r.text}\n\`\`\`` };
        throw new UnsupportedContentError(`the agent reads text only: the binary resource ${r.uri} cannot be sent`);
      }
      case 'image':
        if (caps.image) return { raw: b.data, mediaType: b.mimeType };
        throw new UnsupportedContentError('the agent does not take images (promptCapabilities.image is false)');
      default:
        throw new UnsupportedContentError(`the agent does not take ${b.type} content`);
    }
  });
}

/** Prompt capabilities from the A2A Agent Card's input modes: text always, images only if it lists an image type. */
export function promptCapabilitiesOf(card: Record<string, unknown>): PromptCapabilities {
  const modes = Array.isArray(card['defaultInputModes']) ? (card['defaultInputModes'] as unknown[]) : [];
  const takes = (prefix: string): boolean => modes.some((m) => typeof m === 'string' && m.startsWith(prefix));
  // Embedded resources are sent as text, which every CleverAgents agent reads.
  return { image: takes('image/'), audio: false, embeddedContext: takes('text/') };
}
