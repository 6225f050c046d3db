/**
 * An actor that thinks: an LLM behind a provider, as a chat turn of the agent loop. One turn sends
 * the session's history (trimmed to the model's window) and the actor's tools, streams the answer
 * as `response` artifact chunks as tokens arrive, and lets the loop run the tool calls (validated,
 * decided by the project's automation profile — asking through input-required — recorded as
 * `tool-call` artifacts, every write checkpointed for `agents session undo`). Token usage and cost
 * are kept on the task. Cancelling the task aborts the request and the tool.
 */
import type { ActorDefinition } from '../../../domain/registry/actor.definition.ts';
import type { Actor, ActorTurn } from '../../ports/actor.port.ts';
import type { LlmActorDeps } from './llm-actor.deps.ts';
import { LlmTurn } from './llm-turn.ts';

export class LlmActor implements Actor {
  readonly description: string;

  readonly name: string;
  private readonly def: ActorDefinition;
  private readonly deps: LlmActorDeps;

  constructor(name: string, def: ActorDefinition, deps: LlmActorDeps) {
    this.name = name;
    this.def = def;
    this.deps = deps;
    this.description = def.description ?? `${def.provider} model ${def.model}`;
  }

  async handle(turn: ActorTurn): Promise<void> {
    await new LlmTurn(this.name, this.def, this.deps, turn).run();
  }
}
