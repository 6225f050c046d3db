import type { TaskPushNotificationConfig } from '../../domain/a2a.model.ts';
import type { EgressPolicy } from '../ports/egress.port.ts';
import type { PushConfigRepository } from '../ports/push-config.repository.port.ts';
import type { InlinePushRegistrar, PreparedInlinePush } from '../tasks/task.types.ts';
import { refusePushTarget, toStored } from './push-config.service.ts';

/**
 * The push config given inline with a send (`configuration.taskPushNotificationConfig`). Apart from
 * PushConfigService because the task service takes it in when it is made, while PushConfigService
 * needs the task service (to check the caller may see a task): each is built in order.
 */
export class InlinePushConfigs implements InlinePushRegistrar {
  private readonly repo: PushConfigRepository;
  private readonly egress: EgressPolicy;
  private readonly onChange: (taskId: string) => void;
  private readonly onNone: (taskId: string) => void;

  constructor(
    repo: PushConfigRepository,
    egress: EgressPolicy,
    onChange: (taskId: string) => void = () => {},
    onNone: (taskId: string) => void = () => {},
  ) {
    this.repo = repo;
    this.egress = egress;
    this.onChange = onChange;
    this.onNone = onNone;
  }

  createdWithout(taskId: string): () => void {
    this.onNone(taskId);
    return () => this.onChange(taskId);
  }

  /**
   * Validated now (its webhook too); a new task's create stores it with the task row, so no event
   * of the turn precedes it and it is never written before its task.
   */
  async prepare(taskId: string, config: TaskPushNotificationConfig): Promise<PreparedInlinePush> {
    const field = 'configuration.taskPushNotificationConfig';
    const stored = toStored(taskId, { ...config, taskId }, `${field}.id`);
    await refusePushTarget(this.egress, config.url, `${field}.url`);
    return {
      config: stored,
      store: async () => {
        await this.repo.put(stored);
        this.onChange(taskId);
      },
      created: () => this.onChange(taskId),
    };
  }
}
