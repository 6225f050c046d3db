import type { ActorDefinition } from '../../../domain/registry/actor.definition.ts';
import type { Session } from '../../../domain/session.ts';
import type { CompactionService } from '../../sessions/compaction.service.ts';
import type { ContextProvider } from '../../context/context.types.ts';
import type { HookService } from '../../hooks/hook.service.ts';
import type { ApiKeys, LanguageModels, SchemaValidator, TokenCounter } from '../../ports/language-model.port.ts';
import type { Logger } from '../../ports/logger.port.ts';
import type { StoredTask } from '../../ports/task.repository.port.ts';
import type { TranscriptStore } from '../../ports/transcript.port.ts';
import type { Tracer } from '../../ports/tracer.port.ts';
import type { TurnCheckpoints } from '../../ports/turn-checkpoints.port.ts';
import type { ChatToolbox } from './chat-toolbox.service.ts';

/** What an LLM actor's turns use: the model, keys, tools, the session's history, and the optional services. */
export interface LlmActorDeps {
  models: LanguageModels;
  keys: ApiKeys;
  tokens: TokenCounter;
  validator: SchemaValidator;
  toolbox: ChatToolbox;
  transcripts: TranscriptStore;
  /** The session's earlier turns. */
  turnsOf(contextId: string, limit: number): Promise<StoredTask[]>;
  session(id: string): Promise<Session | undefined>;
  logger: Logger;
  /** What a project-bound chat's actor sees of the project (the context service, view `default`). */
  context?: ContextProvider | undefined;
  /** Compacts the session's earlier turns when they near the window (absent: never). */
  compaction?: CompactionService | undefined;
  /** An actor's definition by name: the actor's `fallbacks` (absent: fallbacks are skipped as missing). */
  lookupActor?: ((name: string) => Promise<ActorDefinition | undefined>) | undefined;
  /** The hooks run before and after each tool call (absent: none). */
  hooks?: HookService | undefined;
  /** The undo history of chat turns that write to a project (absent: writes are not checkpointed). */
  checkpoints?: TurnCheckpoints | undefined;
  /** Local or server mode: where a missing key's variable is to be set (absent: wording true in both). */
  mode?: 'local' | 'server' | undefined;
  /** Spans for the turn's model and tool calls (absent: none). */
  tracer?: Tracer | undefined;
}
