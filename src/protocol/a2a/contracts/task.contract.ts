import { z } from 'zod';
import { Metadata, StreamResponse, Task, TaskState, Timestamp, toUtcTimestamp } from '../../../domain/a2a.model.ts';
import { defineContract, defineStreamContract, type ContractFamily } from '../contract.ts';
import { stateFromV03, streamResponseToV03, taskToV03, V03State, V03TaskId, V03TaskQuery } from '../v03.codec.ts';

/** Compared with stored (UTC) instants, so normalised to UTC first. */
const TimestampFilter = Timestamp.transform(toUtcTimestamp);

const HistoryLength = z.number().int('must be an integer').nonnegative('must be >= 0');

export const GetTaskRequest = z.object({
  tenant: z.string().optional(),
  id: z.string().min(1, 'is required'),
  historyLength: HistoryLength.optional(),
});

export const ListTasksRequest = z.object({
  tenant: z.string().optional(),
  contextId: z.string().optional(),
  status: z.union([TaskState, z.literal('TASK_STATE_UNSPECIFIED')]).optional(),
  pageSize: z
    .number()
    .int('must be an integer')
    .min(1, 'must be between 1 and 100')
    .max(100, 'must be between 1 and 100')
    .optional(),
  pageToken: z.string().optional(),
  historyLength: HistoryLength.optional(),
  statusTimestampAfter: TimestampFilter.optional(),
  includeArtifacts: z.boolean().optional(),
});

export const ListTasksResponse = z.object({
  tasks: z.array(Task),
  nextPageToken: z.string(),
  pageSize: z.number().int(),
  totalSize: z.number().int(),
});

export const CancelTaskRequest = z.object({
  tenant: z.string().optional(),
  id: z.string().min(1, 'is required'),
  metadata: Metadata.optional(),
});
export const SubscribeToTaskRequest = z.object({ tenant: z.string().optional(), id: z.string().min(1, 'is required') });

const V03ListTasks = z.object({
  contextId: z.string().optional(),
  status: V03State.optional(),
  pageSize: z.number().int().min(1).max(100).optional(),
  pageToken: z.string().optional(),
  historyLength: HistoryLength.optional(),
  statusTimestampAfter: TimestampFilter.optional(),
  includeArtifacts: z.boolean().optional(),
});

export const getTask = defineContract({
  name: 'GetTask',
  proto: 'GetTaskRequest',
  aliases: ['tasks/get'],
  surface: 'a2a',
  summary: 'Read a task: status, artifacts and (optionally limited) history.',
  permission: 'task:read',
  params: GetTaskRequest,
  result: Task,
  v03: { name: 'tasks/get', params: V03TaskQuery, decode: (p: z.infer<typeof V03TaskQuery>) => p, encode: taskToV03 },
});

export const listTasks = defineContract({
  name: 'ListTasks',
  proto: 'ListTasksRequest',
  aliases: ['tasks/list'],
  surface: 'a2a',
  summary: 'List your tasks, newest first, with cursor paging and filters.',
  permission: 'task:read',
  params: ListTasksRequest,
  result: ListTasksResponse,
  v03: {
    params: V03ListTasks,
    decode: (p: z.infer<typeof V03ListTasks>) => ({ ...p, status: p.status ? stateFromV03(p.status) : undefined }),
    encode: (r: z.infer<typeof ListTasksResponse>) => ({ ...r, tasks: r.tasks.map(taskToV03) }),
  },
});

export const cancelTask = defineContract({
  name: 'CancelTask',
  proto: 'CancelTaskRequest',
  aliases: ['tasks/cancel'],
  surface: 'a2a',
  summary: 'Cancel a task that has not finished; returns the canceled task.',
  permission: 'task:write',
  params: CancelTaskRequest,
  result: Task,
  v03: { name: 'tasks/cancel', params: V03TaskId, decode: (p: z.infer<typeof V03TaskId>) => p, encode: taskToV03 },
});

export const subscribeToTask = defineStreamContract({
  name: 'SubscribeToTask',
  proto: 'SubscribeToTaskRequest',
  aliases: ['tasks/subscribe'],
  surface: 'a2a',
  summary: "Stream an unfinished task's updates: its current state first, then every event until it ends.",
  permission: 'task:read',
  params: SubscribeToTaskRequest,
  result: StreamResponse,
  v03: {
    name: 'tasks/resubscribe',
    params: V03TaskId,
    decode: (p: z.infer<typeof V03TaskId>) => p,
    encode: streamResponseToV03,
  },
});

/** The task family: every row of task.contract.ts, in the table's order. */
export const TASK_METHODS = {
  getTask,
  listTasks,
  cancelTask,
  subscribeToTask,
} as const satisfies ContractFamily;
