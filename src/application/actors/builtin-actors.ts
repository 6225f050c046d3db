import type { Actor } from '../ports/actor.port.ts';
import { ConformanceActor, type ConformanceOptions } from './conformance.actor.ts';
import { EchoActor, type EchoDeps } from './echo.actor.ts';

export interface BuiltinActorOptions {
  conformance?: ConformanceOptions;
  /** The session's turns, for the echo's first-turn hint (absent: no hint). */
  echo?: EchoDeps;
}

/** The deterministic actors, by model name (`provider: builtin` actors name one of these). */
export function builtinActorsByModel(opts: BuiltinActorOptions = {}): Map<string, Actor> {
  return new Map<string, Actor>([
    ['echo', new EchoActor(opts.echo)],
    ['conformance', new ConformanceActor(opts.conformance)],
  ]);
}
