import type { Actor } from '../ports/actor.port.ts';
import { ConformanceActor, type ConformanceOptions } from './conformance.actor.ts';
import { EchoActor } from './echo.actor.ts';

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
