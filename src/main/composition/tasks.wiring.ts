import type { PayloadLimits } from '../../domain/limits.ts';
import type { ActorCatalog } from '../../application/ports/actor.port.ts';
import type { Tracer } from '../../application/ports/tracer.port.ts';
import type { Logger } from '../../application/ports/logger.port.ts';
import type { TaskRepository } from '../../application/ports/task.repository.port.ts';
import type { SessionService } from '../../application/sessions/session.service.ts';
import { LiveTasks, type LiveTask } from '../../application/tasks/live-tasks.service.ts';
import { MessageIntake, type TurnAdmission } from '../../application/tasks/message-intake.service.ts';
import { OwnedTasks } from '../../application/tasks/owned-tasks.service.ts';
import { SendReplay } from '../../application/tasks/send-replay.service.ts';
import { StrandedTasks } from '../../application/tasks/stranded-tasks.service.ts';
import { TaskEventRecorder } from '../../application/tasks/task-event.recorder.ts';
import { TaskService } from '../../application/tasks/task.service.ts';
import type { InlinePushRegistrar, TaskEventObserver } from '../../application/tasks/task.types.ts';
import { TurnRunner } from '../../application/tasks/turn-runner.service.ts';

export interface TaskPartsDeps {
  tasks: TaskRepository;
  sessions: SessionService;
  actors: ActorCatalog;
  logger: Logger;
  now?: () => Date;
  limits?: PayloadLimits | undefined;
  /** Takes sends' inline push configs (absent: a send with one is refused). */
  inlinePush?: InlinePushRegistrar | undefined;
  /** Refuses a turn over the sender's limits (concurrent turns, tokens per day). */
  admission?: TurnAdmission | undefined;
  /** Who sees every event (the push notifier). */
  observers?: readonly TaskEventObserver[] | undefined;
  /** A span per turn (absent: none). */
  tracer?: Tracer | undefined;
}

/**
 * The task service and the parts it is made of, each handed to whoever needs that part alone:
 * retention asks `live`, a graceful stop drains `turns`, recovery settles through `stranded`, and
 * services that run tasks themselves (plans) register with `owned`.
 */
export interface TaskParts {
  service: TaskService;
  live: LiveTasks;
  turns: TurnRunner;
  owned: OwnedTasks;
  stranded: StrandedTasks;
}

export function buildTasks(deps: TaskPartsDeps): TaskParts {
  const { tasks, sessions, logger } = deps;
  const now = deps.now ?? ((): Date => new Date());
  const recorder = new TaskEventRecorder({ tasks, sessions, logger, now, observers: deps.observers });
  const live = new LiveTasks(tasks, logger, (l) => settleOvertaken(recorder, logger, l));
  const turns = new TurnRunner({ tasks, live, recorder, logger, tracer: deps.tracer });
  const owned = new OwnedTasks({ tasks, live, turns, now });
  const intake = new MessageIntake({
    tasks,
    sessions,
    actors: deps.actors,
    live,
    owned,
    now,
    limits: deps.limits,
    inlinePush: deps.inlinePush,
    admission: deps.admission,
  });
  const replay = new SendReplay(tasks, live);
  const stranded = new StrandedTasks({ tasks, live, recorder, logger });
  const service = new TaskService({ tasks, live, recorder, turns, owned, intake, replay, stranded, now });
  return { service, live, turns, owned, stranded };
}

/** Another process finished a task whose turn runs here: its listeners get the stored final state. */
function settleOvertaken(recorder: TaskEventRecorder, logger: Logger, live: LiveTask): void {
  void recorder
    .overtaken(live)
    .catch((err: unknown) => logger.warn({ err, taskId: live.task.id }, 'reading a task finished elsewhere failed'));
}
