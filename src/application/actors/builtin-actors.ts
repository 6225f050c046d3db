import type { Actor, ActorCatalog } from '../ports/actor.port.js';
import { ConformanceActor, type ConformanceOptions } from './conformance.actor.js';
import { EchoActor } from './echo.actor.js';

export interface BuiltinActorOptions {
  conformance?: ConformanceOptions;
}

/** The deterministic actors, by model name (`provider: builtin` actors name one of these). */
export function builtinActorsByModel(opts: BuiltinActorOptions = {}): Map<string, Actor> {
  return new Map<string, Actor>([
    ['echo', new EchoActor()],
    ['conformance', new ConformanceActor(opts.conformance)],
  ]);
}

/** A catalog of just the built-in actors (`builtin/echo`, `builtin/conformance`). */
export function builtinActors(opts: BuiltinActorOptions = {}): ActorCatalog {
  const byName = new Map([...builtinActorsByModel(opts).values()].map((a) => [a.name, a]));
  return {
    resolve: (name) => Promise.resolve(byName.get(name)),
    names: () => [...byName.keys()],
  };
}
