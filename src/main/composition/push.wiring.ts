import type { Task } from '../../domain/a2a.model.ts';
import type { PushConfigRepository } from '../../application/ports/push-config.repository.port.ts';
import { InlinePushConfigs } from '../../application/push/inline-push-configs.service.ts';
import { PushConfigService } from '../../application/push/push-config.service.ts';
import { PushNotifier } from '../../application/push/push-notifier.service.ts';
import type { TaskService } from '../../application/tasks/task.service.ts';
import type { StreamItem, TaskEventObserver } from '../../application/tasks/task.types.ts';
import type { ServiceDeps } from './service-deps.ts';

/** What push notifications give the task service before it is made. */
export interface PushDelivery {
  notifier: PushNotifier;
  /** Sends' inline push configs. */
  inline: InlinePushConfigs;
  /** The notifier as an observer of every task event. */
  observer: TaskEventObserver;
}

/**
 * The notifier first: it reads the configs from their store, so the task service can take it (and
 * the inline configs) when it is made; the push config service, which checks tasks, comes after.
 */
export function buildPushDelivery(deps: ServiceDeps): PushDelivery {
  const configs = deps.pushConfigs;
  const notifier = new PushNotifier((taskId) => configs.list(taskId), deps.pushOutbox, deps.webhooks, deps.logger, {
    ...deps.push,
    scheduler: deps.pushScheduler ?? deps.push?.scheduler,
    // Configs changed by another process sharing the store (another instance, a local agent).
    changes: configs,
  });
  return {
    notifier,
    inline: new InlinePushConfigs(
      configs,
      deps.egress,
      (taskId) => notifier.invalidate(taskId),
      (taskId) => notifier.knownEmpty(taskId),
    ),
    observer: new NotifierObserver(notifier),
  };
}

/** The push config methods (`tasks/pushNotificationConfig/…`): after the task service they check tasks with. */
export function buildPushConfigs(
  configs: PushConfigRepository,
  deps: Pick<ServiceDeps, 'egress'>,
  tasks: TaskService,
  notifier: PushNotifier,
): PushConfigService {
  return new PushConfigService(configs, tasks, deps.egress, (taskId) => notifier.invalidate(taskId));
}

/** Hands every task event to the push notifier: into the outbox with the event's write, then out. */
class NotifierObserver implements TaskEventObserver {
  private readonly notifier: PushNotifier;

  constructor(notifier: PushNotifier) {
    this.notifier = notifier;
  }

  recording(taskId: string, item: StreamItem): void {
    this.notifier.recording(taskId, item);
  }

  stored(task: Task, _owner: string, item: StreamItem): void {
    this.notifier.notify(task, item);
  }
}
