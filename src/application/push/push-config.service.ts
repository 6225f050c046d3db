import type { TaskPushNotificationConfig } from '../../domain/a2a.model.ts';
import { AppError } from '../../domain/errors.ts';
import { newId, SAFE_ID } from '../../domain/ids.ts';
import { pageOf } from '../../domain/paging.ts';
import type { EgressPolicy } from '../ports/egress.port.ts';
import type { Principal } from '../ports/principal.ts';
import type { PushConfigRepository, StoredPushConfig } from '../ports/push-config.repository.port.ts';
import type { TaskService } from '../tasks/task.service.ts';

/**
 * Push-notification configurations of tasks (A2A §3.1.7–3.1.10). A webhook the egress policy
 * refuses is refused when the config is created, with the reason: delivery would refuse it too,
 * and a config that is accepted and then silently never delivered helps nobody.
 */
export class PushConfigService {
  private readonly repo: PushConfigRepository;
  private readonly tasks: TaskService;
  private readonly egress: EgressPolicy;
  private readonly onChange: (taskId: string) => void;

  constructor(
    repo: PushConfigRepository,
    tasks: TaskService,
    egress: EgressPolicy,
    onChange: (taskId: string) => void = () => {},
  ) {
    this.repo = repo;
    this.tasks = tasks;
    this.egress = egress;
    this.onChange = onChange;
  }

  async create(taskId: string, config: TaskPushNotificationConfig, principal: Principal): Promise<StoredPushConfig> {
    await this.tasks.get(taskId, 0, principal);
    if (config.taskId && config.taskId !== taskId) {
      throw new AppError('INVALID_PARAMS', 'taskId in the configuration does not match the task', {
        fields: [{ field: 'taskId', description: 'must name the task the configuration is for' }],
      });
    }
    const stored = toStored(taskId, config, 'id');
    await refusePushTarget(this.egress, config.url, 'url');
    await this.repo.put(stored);
    this.onChange(taskId);
    return redact(stored);
  }

  async get(taskId: string, id: string, principal: Principal): Promise<StoredPushConfig> {
    await this.tasks.get(taskId, 0, principal);
    const c = await this.repo.get(taskId, id);
    if (!c) {
      throw new AppError('TASK_NOT_FOUND', `Push notification config ${id} of task ${taskId} was not found`, {
        details: { taskId, configId: id },
      });
    }
    return redact(c);
  }

  /** A task's configs ordered by id, a page at a time (`pageSize` 0 or absent: all of them). */
  async list(
    taskId: string,
    principal: Principal,
    page: { pageSize?: number | undefined; pageToken?: string | undefined } = {},
  ): Promise<{ configs: StoredPushConfig[]; nextPageToken: string }> {
    await this.tasks.get(taskId, 0, principal);
    const all = (await this.repo.list(taskId)).map(redact).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const { items, nextPageToken } = pageOf(all, (c) => ({ key: c.id, id: c.id }), {
      pageToken: page.pageToken,
      pageSize: page.pageSize || all.length,
      order: 'asc',
    });
    return { configs: items, nextPageToken };
  }

  async delete(taskId: string, id: string, principal: Principal): Promise<void> {
    await this.tasks.get(taskId, 0, principal);
    // Idempotent: deleting what is already gone succeeds.
    await this.repo.delete(taskId, id);
    this.onChange(taskId);
  }
}

/** A config as stored for the task (its id made when absent); INVALID_PARAMS naming `field` for a bad id. */
export function toStored(taskId: string, config: TaskPushNotificationConfig, field: string): StoredPushConfig {
  const id = config.id || newId();
  if (!SAFE_ID.test(id)) {
    throw new AppError('INVALID_PARAMS', 'config id must be 1-128 characters of letters, digits and . _ : @ -', {
      fields: [{ field, description: 'letters, digits and . _ : @ - only' }],
    });
  }
  const stored: StoredPushConfig = { ...config, id, taskId };
  delete stored.tenant;
  return stored;
}

/** Credentials are write-only: get and list never return them. */
function redact(c: StoredPushConfig): StoredPushConfig {
  if (!c.authentication?.credentials) return c;
  return { ...c, authentication: { scheme: c.authentication.scheme } };
}

/** INVALID_PARAMS naming the field when the webhook may not be reached (the egress policy's reason). */
export async function refusePushTarget(egress: EgressPolicy, url: string, field: string): Promise<void> {
  const why = await egress.refusal(url);
  if (why === undefined) return;
  throw new AppError('INVALID_PARAMS', `The push notification URL is refused: ${why}`, {
    fields: [{ field, description: why }],
  });
}
