import type { Actor, ActorCatalog } from '../ports/actor.port.js';
import { ConformanceActor, type ConformanceOptions } from './conformance.actor.js';
import { EchoActor } from './echo.actor.js';

/** The actors that ship with CleverAgents and need no LLM. */
export function builtinActors(opts: { conformance?: ConformanceOptions } = {}): ActorCatalog {
  const actors = new Map<string, Actor>();
  for (const a of [new EchoActor(), new ConformanceActor(opts.conformance)]) actors.set(a.name, a);
  return {
    get: (name) => actors.get(name),
    names: () => [...actors.keys()],
  };
}
