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
  /**
   * A number that moves whenever any task's configs may have changed, by this process or another
   * sharing the store. Read at every event, so it must be cheap and synchronous.
   */
  version?(): number;
  /**
   * Calls `handler(taskId)` once a change of that task's configs is committed, by any process
   * sharing the store (this one included); `handler('')` when changes may have been missed (every
   * task's configs may have changed), until the returned function is called.
   */
  watch?(handler: (taskId: string) => void): Promise<() => Promise<void>>;
}
