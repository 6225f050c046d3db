import type { Message, StreamResponse, Task, TaskPushNotificationConfig, TaskState } from '../../domain/a2a.model.ts';
import type { ActorTurn } from '../ports/actor.port.ts';
import type { Principal } from '../ports/principal.ts';
import type { StoredPushConfig } from '../ports/push-config.repository.port.ts';

/** One item of a task stream, with the task's event sequence number it reflects. */
export interface StreamItem {
  seq: number;
  payload: StreamResponse;
  /**
   * `payload` as JSON text, when it was serialised already (an event as it was stored): a
   * transport may send it as it is instead of serialising the payload again.
   */
  json?: string;
}

export interface SendInput {
  message: Message;
  configuration?:
    | {
        historyLength?: number | undefined;
        returnImmediately?: boolean | undefined;
        taskPushNotificationConfig?: TaskPushNotificationConfig | undefined;
        acceptedOutputModes?: string[] | undefined;
      }
    | undefined;
  metadata?: Record<string, unknown> | undefined;
}

export type SendResult = { task: Task } | { message: Message };

export interface ListInput {
  contextId?: string | undefined;
  status?: TaskState | undefined;
  pageSize?: number | undefined;
  pageToken?: string | undefined;
  historyLength?: number | undefined;
  statusTimestampAfter?: string | undefined;
  includeArtifacts?: boolean | undefined;
}

export interface ListResult {
  tasks: Task[];
  nextPageToken: string;
  pageSize: number;
  totalSize: number;
}

/** Work a service runs itself as a turn of a task it owns (a plan phase); reports like an actor turn. */
export type OwnedRun = (turn: ActorTurn) => Promise<void>;

/**
 * A service that owns some contexts (plans): nothing sent there reaches an actor. A message without
 * taskId is refused; a message on one of its tasks goes to `onInput`, which checks it (owner, state)
 * and returns the run that continues the task — or throws, and nothing is stored.
 */
export interface ContextOwner {
  /** What owns the context, in words for messages (e.g. "a plan"), or undefined when not this owner. */
  ownerOf(contextId: string): Promise<string | undefined>;
  onInput(task: Readonly<Task>, message: Message, principal: Principal): Promise<OwnedRun>;
}

/**
 * A push config given inline with a send, validated. A new task's is stored by the task's own
 * create (TaskRepository.create, one write with the task row: stored apart, on PostgreSQL it could
 * land on another connection before the task and be refused); a follow-up's task exists already,
 * so `store` writes it after the message is stored.
 */
export interface PreparedInlinePush {
  /** The config as stored, for the task's create. */
  config: StoredPushConfig;
  /** Stores the config of a task that exists (a follow-up's). */
  store(): Promise<void>;
  /** Tells the instance's readers of the task's configs that the task's create stored it. */
  created(): void;
}

/**
 * Registers the push config given inline with a send (`configuration.taskPushNotificationConfig`):
 * `prepare` validates it — its webhook too, which may need a name lookup, hence async — rejecting
 * with INVALID_PARAMS before anything is stored.
 */
export interface InlinePushRegistrar {
  prepare(taskId: string, config: TaskPushNotificationConfig, principal: Principal): Promise<PreparedInlinePush>;
  /**
   * A new task this process creates without an inline config has none: its first event need not
   * read them (on PostgreSQL a round trip per send; a config created later reaches the readers as
   * any change does). Called before the create is sent; the function returned withdraws it (the
   * create failed).
   */
  createdWithout?(taskId: string): () => void;
}

/** Observes every event of every task (push notifications use this). */
export interface TaskEventObserver {
  /**
   * Called when an event is handed to storage (before it is stored): a write it issues at once
   * joins the event's own group commit (the push outbox uses this).
   */
  recording?(taskId: string, item: StreamItem): void;
  /** Called once the event is stored and handed to the task's listeners; `owner` is the task's namespace. */
  stored?(task: Task, owner: string, item: StreamItem): void;
}
