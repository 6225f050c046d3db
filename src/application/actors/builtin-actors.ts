import type { Actor } from '../ports/actor.port.js';
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
