import type { TaskPushNotificationConfig } from '../../domain/a2a.model.ts';

export interface StoredPushConfig extends TaskPushNotificationConfig {
  id: string;
  taskId: string;
}

export interface PushConfigRepository {
  put(config: StoredPushConfig): Promise<void>;
  get(taskId: string, id: string): Promise<StoredPushConfig | undefined>;
  list(taskId: string): Promise<StoredPushConfig[]>;
  delete(taskId: string, id: string): Promise<boolean>;
  deleteByTask(taskId: string): Promise<void>;
}
