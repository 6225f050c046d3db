import { z } from 'zod';
import { TaskPushNotificationConfig } from '../../../domain/a2a.model.ts';
import { defineContract, type ContractFamily } from '../contract.ts';
import {
  pushConfigFromV03,
  pushConfigToV03,
  V03DeletePushConfig,
  V03GetPushConfig,
  V03TaskId,
  V03TaskPushConfig,
} from '../v03.codec.ts';

const TaskRef = { tenant: z.string().optional(), taskId: z.string().min(1, 'is required') };

export const CreatePushConfigRequest = TaskPushNotificationConfig.extend({ taskId: z.string().min(1, 'is required') });
export const GetPushConfigRequest = z.object({ ...TaskRef, id: z.string().min(1, 'is required') });
export const ListPushConfigsRequest = z.object({
  ...TaskRef,
  pageSize: z.number().int().min(0).optional(),
  pageToken: z.string().optional(),
});
export const ListPushConfigsResponse = z.object({
  configs: z.array(TaskPushNotificationConfig),
  nextPageToken: z.string(),
});

export const createPushConfig = defineContract({
  name: 'CreateTaskPushNotificationConfig',
  proto: 'TaskPushNotificationConfig',
  aliases: ['pushNotificationConfig/create'],
  surface: 'a2a',
  summary: "Register a webhook for a task's updates.",
  permission: 'task:write',
  params: CreatePushConfigRequest,
  result: TaskPushNotificationConfig,
  v03: {
    name: 'tasks/pushNotificationConfig/set',
    params: V03TaskPushConfig,
    // v0.3 servers named a config without an id after its task; keep that so get/delete by task id work.
    decode: (p: z.infer<typeof V03TaskPushConfig>) => ({
      ...pushConfigFromV03(p.taskId, p.pushNotificationConfig),
      id: p.pushNotificationConfig.id ?? p.taskId,
    }),
    encode: pushConfigToV03,
  },
});

export const getPushConfig = defineContract({
  name: 'GetTaskPushNotificationConfig',
  proto: 'GetTaskPushNotificationConfigRequest',
  aliases: ['pushNotificationConfig/get'],
  surface: 'a2a',
  summary: "Read one of a task's webhook configurations (credentials are never returned).",
  permission: 'task:read',
  params: GetPushConfigRequest,
  result: TaskPushNotificationConfig,
  v03: {
    name: 'tasks/pushNotificationConfig/get',
    params: V03GetPushConfig,
    // v0.3 allowed omitting the config id: the task's id names its default configuration.
    decode: (p: z.infer<typeof V03GetPushConfig>) => ({ taskId: p.id, id: p.pushNotificationConfigId ?? p.id }),
    encode: pushConfigToV03,
  },
});

export const listPushConfigs = defineContract({
  name: 'ListTaskPushNotificationConfigs',
  proto: 'ListTaskPushNotificationConfigsRequest',
  aliases: ['pushNotificationConfig/list'],
  surface: 'a2a',
  summary: "List a task's webhook configurations.",
  permission: 'task:read',
  params: ListPushConfigsRequest,
  result: ListPushConfigsResponse,
  v03: {
    name: 'tasks/pushNotificationConfig/list',
    params: V03TaskId,
    decode: (p: z.infer<typeof V03TaskId>) => ({ taskId: p.id }),
    encode: (r: z.infer<typeof ListPushConfigsResponse>) => r.configs.map(pushConfigToV03),
  },
});

export const deletePushConfig = defineContract({
  name: 'DeleteTaskPushNotificationConfig',
  proto: 'DeleteTaskPushNotificationConfigRequest',
  aliases: ['pushNotificationConfig/delete'],
  surface: 'a2a',
  summary: 'Remove a webhook configuration (idempotent).',
  permission: 'task:write',
  params: GetPushConfigRequest,
  result: z.object({}).strict(),
  v03: {
    name: 'tasks/pushNotificationConfig/delete',
    params: V03DeletePushConfig,
    decode: (p: z.infer<typeof V03DeletePushConfig>) => ({ taskId: p.id, id: p.pushNotificationConfigId }),
    encode: () => null,
  },
});

/** The push family: every row of push.contract.ts, in the table's order. */
export const PUSH_METHODS = {
  createPushConfig,
  getPushConfig,
  listPushConfigs,
  deletePushConfig,
} as const satisfies ContractFamily;
