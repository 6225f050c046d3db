/**
 * The ports of the agent loop (agent-loop.ts): what a chat turn, a plan's strategize phase and its
 * execute phase each give it — the model, the tools, the policy and approval gate, the recorder,
 * the budgets and the cancellation. The loop owns everything between: validation, policy,
 * approval, hooks, running, recording, feeding results back, the step limit and the window.
 */
import type { ApprovalAnswer } from '../../domain/plan/approval.ts';
import type { PolicyVerdict } from '../../domain/plan/policy.ts';
import type {
  ModelEvent,
  ModelMessage,
  ModelRequest,
  ModelTool,
  ModelToolCall,
  ModelUsage,
} from '../ports/language-model.port.ts';
import type { CommandOutput, CommandOutputChunk, ToolPreview } from '../ports/sandbox.port.ts';
import type { Transcript } from '../ports/transcript.port.ts';
import type { ToolCallHooks } from '../hooks/tool-call-hooks.ts';
import type { Tracer } from '../ports/tracer.port.ts';

/** What a tool call gave back. */
export interface ToolOutcome {
  ok: boolean;
  summary: string;
  /** What the model is given. */
  output: string;
  filesTouched?: string[] | undefined;
  exitCode?: number | null | undefined;
  confinement?: 'confined' | 'none' | undefined;
  /** A command's whole output, to keep in the record. */
  commandOutput?: CommandOutput | undefined;
}

/** A tool the model may call. */
export interface AgentTool {
  /** Its name for users and policies: `builtin/read`, `local/fmt`, `mcp:files/read_file`. */
  ref: string;
  /** Its name for the model (`^[a-zA-Z0-9_-]{1,64}$`). */
  modelName: string;
  description: string;
  inputSchema: Record<string, unknown>;
  readOnly: boolean;
  writes: boolean;
  /** The arguments as the tool takes them; throws (the call is refused with the message) when they cannot be read. */
  normalize?(args: Record<string, unknown>): Record<string, unknown>;
  /** The command line a call runs, for policy rules on commands and "always" answers (undefined: none). */
  commandOf(args: Record<string, unknown>): string[] | undefined;
  /** What the call would do (a diff, a command line), for an approval request. */
  preview?(args: Record<string, unknown>, signal: AbortSignal): Promise<ToolPreview>;
  run(
    args: Record<string, unknown>,
    ctx: { signal: AbortSignal; onOutput?: ((chunk: CommandOutputChunk) => void) | undefined },
  ): Promise<ToolOutcome>;
}

/**
 * A tool the configuration answers itself (`finish`, `submit_strategy`): offered like the others,
 * never run through policy or the tool runner. `stop`: the loop ends after this step's calls.
 */
export interface ControlTool {
  tool: ModelTool;
  handle(
    args: { ok: true; value: Record<string, unknown> } | { ok: false; problem: string },
  ): ControlResult | Promise<ControlResult>;
}

/** What a control tool answers the model, and whether the loop ends after this step's calls. */
export interface ControlResult {
  output: string;
  isError: boolean;
  stop?: boolean;
}

/** A call the loop did not run, or ran, as the recorder hears of it. */
export interface CallEvent {
  call: ModelToolCall;
  /** The tool's ref (the model's name when there is no such tool). */
  ref: string;
  tool?: AgentTool | undefined;
  /** The parsed arguments (the raw text when they were not JSON). */
  args: unknown;
  verdict?: PolicyVerdict | undefined;
}

export type NotRunState = 'invalid' | 'denied' | 'declined' | 'vetoed';

/** Where the loop's calls are recorded and shown (task artifacts, plan records and status lines). */
export interface AgentRecorder {
  /** `summary`: one line for people; `told`: what the model was told. */
  notRun(
    e: CallEvent & { state: NotRunState; summary: string; told?: string | undefined; hook?: string | undefined },
  ): Promise<void>;
  /** A call starts: returns what `output` and `finished` are given back. */
  started(e: CallEvent & { tool: AgentTool }): Promise<unknown>;
  /** A piece of a command's output as it comes (not awaited: it must not block the command). */
  output?(handle: unknown, chunk: CommandOutputChunk): void;
  /** The call ended (a configuration's own failure thrown here stops the loop). */
  finished(
    e: CallEvent & { tool: AgentTool; outcome: ToolOutcome; durationMs: number },
    handle: unknown,
  ): Promise<void>;
}

/** An "always" answer: this tool (or this command prefix of it) runs without asking again. */
export interface AlwaysRule {
  tool: string;
  /** The command line's first words (absent: every call of the tool). */
  commandPrefix?: string[] | undefined;
}

/** The answer to the call the loop waits on, as the configuration read it. */
export interface CallAnswer {
  callId: string;
  answer: ApprovalAnswer;
}

/** Asks a person about a call, and what they already allowed. */
export interface ApprovalGate {
  /** Every `ask` verdict is taken as approved (`plan execute --yes`). */
  readonly yes?: boolean | undefined;
  /** What was answered "always" so far (the session's, the plan's). */
  always(): readonly AlwaysRule[];
  /** Keeps an "always" answer (recorded where the configuration keeps them). */
  remember(rule: AlwaysRule): Promise<void>;
  /**
   * Asks: the loop's transcript is saved first (ApprovalGate.save), then the question is put; the
   * loop returns `waiting`. `problem`: the last answer could not be read (said with the question).
   */
  ask(
    e: CallEvent & {
      tool: AgentTool;
      args: Record<string, unknown>;
      preview: ToolPreview;
      verdict: PolicyVerdict;
      problem?: string | undefined;
    },
  ): Promise<void>;
}

/** Why a budget stops the loop (the configuration says it in its own words). */
export interface BudgetStop {
  /** `tokens`, `cost`, `wall`, `tool-calls`. */
  budget: string;
  message: string;
}

/** Budgets: checked before each step and each call, and while the model streams. */
export interface AgentBudget {
  beforeStep?(): BudgetStop | undefined;
  beforeCall?(): BudgetStop | undefined;
  /**
   * While a step streams: `estimate` is its tokens so far (the prompt as counted, and the output
   * streamed). A stop aborts the provider request at once (the partial answer is kept).
   */
  duringStep?(estimate: ModelUsage): BudgetStop | undefined;
  /** How long the step may still take (ms; undefined: no limit): the request is aborted then. */
  remainingMs?(): number | undefined;
  /** A step ended (or was stopped): its usage, as reported (or estimated when it was stopped). */
  afterStep(usage: ModelUsage): void;
}

/** The model the loop talks to (an actor and its fallbacks). */
export interface AgentModel {
  readonly name: string;
  /** The provider and model asked first, for traces (`gen_ai.provider.name`, `gen_ai.request.model`). */
  readonly provider?: string | undefined;
  readonly modelId?: string | undefined;
  stream(req: Omit<ModelRequest, 'actor' | 'apiKey'>): AsyncIterable<ModelEvent>;
  /** Tokens of a text, as the model counts them (close enough to budget and fit). */
  count(text: string): Promise<number>;
}

/** How a loop ended. */
export type AgentOutcome =
  /** The model answered without (further) tool calls. `reason`: its finish reason. */
  | { kind: 'answered'; text: string; reason: string }
  /** A control tool ended it (`finish`). */
  | { kind: 'stopped' }
  /** A call waits for a person's answer (the transcript was saved). */
  | { kind: 'waiting' }
  /** maxSteps were taken: the model's last step, without tools, summarised what it did (`text`). */
  | { kind: 'step-limit'; text: string; steps: number }
  /** Only invalid calls, MAX_MALFORMED_STEPS steps in a row; `last`: the last answer the model got. */
  | { kind: 'invalid-calls'; last: string; steps: number }
  /** The conversation no longer fits the window (`room`: the tokens left after the answer's reserve). */
  | { kind: 'window'; room: number; reserve: number; window: number }
  /** A budget is spent (`partial`: the text the stopped step had streamed). */
  | { kind: 'budget'; stop: BudgetStop; partial: string };

/** What the loop is given. */
export interface AgentConfig {
  model: AgentModel;
  system: string;
  tools: readonly AgentTool[];
  control?: readonly ControlTool[] | undefined;
  /** The policy's verdict on a call of a tool (a read-only tool runs unless a rule denies it). */
  decide(tool: AgentTool, args: Record<string, unknown>): PolicyVerdict;
  /** Whose policy denies, for the model (`the plan's automation profile`; absent: not said). */
  policyName?: string | undefined;
  approvals: ApprovalGate;
  recorder: AgentRecorder;
  hooks?: ToolCallHooks | undefined;
  budget: AgentBudget;
  validate(schema: Record<string, unknown>, value: unknown): string[];
  signal: AbortSignal;
  maxSteps: number;
  /** The window and the answer's reserve; `history`: earlier turns (trimmed oldest first to fit). */
  window: { contextWindow: number; reserve: number; history?: readonly ModelMessage[][] | undefined };
  /** The model's words as they stream (`step`: the step they belong to, from 0). */
  onText(delta: string, step: number): Promise<void>;
  /** Keeps the transcript (before an approval is asked). */
  save(transcript: Transcript): Promise<void>;
  /** The answer given to the call the transcript waits on (a follow-up message, a recorded decision). */
  answer?: CallAnswer | undefined;
  /** The last answer could not be read: the call is asked again, saying this. */
  answerProblem?: string | undefined;
  /** Around a call that may write (checkpoints of a chat turn); a failure before means the call does not run. */
  beforeWrite?(): Promise<void>;
  afterWrite?(): Promise<void>;
  /** Spans for each model call and tool call (absent: none). */
  tracer?: Tracer | undefined;
}
