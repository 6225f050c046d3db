import type { Message, Task } from '../../domain/a2a.model.ts';
import { AppError } from '../../domain/errors.ts';
import { newId } from '../../domain/ids.ts';
import type { Actor } from '../ports/actor.port.ts';
import type { Principal } from '../ports/principal.ts';
import type { TaskRepository } from '../ports/task.repository.port.ts';
import type { LiveTask, LiveTasks } from './live-tasks.service.ts';
import { viewTask } from './task.views.ts';
import type { ContextOwner, OwnedRun } from './task.types.ts';
import type { TurnRunner } from './turn-runner.service.ts';

export interface OwnedTasksDeps {
  tasks: Pick<TaskRepository, 'create'>;
  live: LiveTasks;
  turns: TurnRunner;
  now: () => Date;
}

/**
 * Tasks a service runs itself (plans) in contexts it owns: started without a session or actor,
 * run as turns like any other, and no chat message reaches an owned context.
 */
export class OwnedTasks {
  private readonly owners: ContextOwner[] = [];

  private readonly deps: OwnedTasksDeps;

  constructor(deps: OwnedTasksDeps) {
    this.deps = deps;
  }

  /** Lets a service own contexts (the composition root registers the plan service): see ContextOwner. */
  add(owner: ContextOwner): void {
    this.owners.push(owner);
  }

  /**
   * Starts a task in a context the caller's service owns and runs `run` as its turn (see
   * TaskService.startOwnedTask, the way plans reach it).
   */
  async start(
    input: { contextId: string; text: string; wait: boolean },
    principal: Principal,
    run: OwnedRun,
  ): Promise<Task> {
    const { live: registry, turns } = this.deps;
    const taskId = newId();
    const message: Message = {
      messageId: newId(),
      role: 'ROLE_USER',
      contextId: input.contextId,
      taskId,
      parts: [{ text: input.text }],
    };
    const task: Task = {
      id: taskId,
      contextId: input.contextId,
      status: { state: 'TASK_STATE_SUBMITTED', timestamp: this.deps.now().toISOString() },
      history: [message],
    };
    // Started by the principal: while the phase runs, it is one of their running turns.
    const created = this.deps.tasks.create(task, principal.namespace, undefined, undefined, principal.id);
    const live = registry.register(task, principal.namespace, 0);
    live.chain = created;
    created.catch(() => {
      live.abort.abort();
      registry.drop(live);
    });
    const settled = registry.waitSettled(live);
    turns.start(live, ownedActor(run), message, false, false, principal.id);
    await created;
    if (input.wait) await settled;
    const view = viewTask(live.task, { historyLength: 0 });
    registry.release(live);
    return view;
  }

  /** A follow-up on a task of an owned context: the owner's run, or undefined for a chat task. */
  async inputFor(live: LiveTask, message: Message, principal: Principal): Promise<Actor | undefined> {
    try {
      for (const owner of this.owners) {
        if (await owner.ownerOf(live.task.contextId))
          return ownedActor(await owner.onInput(live.task, message, principal));
      }
      return undefined;
    } catch (err) {
      this.deps.live.release(live);
      throw err;
    }
  }

  /** Refuses a new chat message (no taskId) in a context a service owns. */
  async refuseChat(contextId: string | undefined): Promise<void> {
    if (!contextId) return;
    for (const owner of this.owners) {
      const what = await owner.ownerOf(contextId);
      if (what) {
        throw new AppError(
          'UNSUPPORTED_OPERATION',
          `Context ${contextId} belongs to ${what} and takes no chat messages`,
          {
            details: { contextId },
            hint: 'answer a waiting request with message/send on its task (taskId), or use the agents plan commands',
          },
        );
      }
    }
  }
}

/** A service's run in the shape of an actor, so that it runs as a turn like any other. */
function ownedActor(run: OwnedRun): Actor {
  return { name: 'task owner', description: 'a turn run by the service that owns the task', handle: run };
}
