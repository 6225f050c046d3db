import { z } from 'zod';
import { Message, Metadata, StreamResponse, Task, TaskPushNotificationConfig } from '../../../domain/a2a.model.ts';
import { defineContract, defineStreamContract, type ContractFamily } from '../contract.ts';
import {
  messageFromV03,
  pushConfigFromV03,
  sendResultToV03,
  streamResponseToV03,
  V03MessageSendParams,
} from '../v03.codec.ts';

export const SendMessageConfiguration = z.object({
  acceptedOutputModes: z.array(z.string()).optional(),
  taskPushNotificationConfig: TaskPushNotificationConfig.optional(),
  historyLength: z.number().int().nonnegative('must be >= 0').optional(),
  returnImmediately: z.boolean().optional(),
});

export const SendMessageRequest = z.object({
  tenant: z.string().optional(),
  message: Message,
  configuration: SendMessageConfiguration.optional(),
  metadata: Metadata.optional(),
});
export type SendMessageRequest = z.infer<typeof SendMessageRequest>;

export const SendMessageResponse = z.union([
  z.object({ task: Task }).strict(),
  z.object({ message: Message }).strict(),
]);

function decodeV03Send(p: z.infer<typeof V03MessageSendParams>): SendMessageRequest {
  const out: SendMessageRequest = { message: messageFromV03(p.message) };
  const c = p.configuration;
  if (c) {
    out.configuration = { returnImmediately: c.blocking === false };
    if (c.historyLength !== undefined) out.configuration.historyLength = c.historyLength;
    if (c.acceptedOutputModes) out.configuration.acceptedOutputModes = c.acceptedOutputModes;
    if (c.pushNotificationConfig)
      out.configuration.taskPushNotificationConfig = pushConfigFromV03('', c.pushNotificationConfig);
  }
  if (p.metadata) out.metadata = p.metadata;
  return out;
}

export const sendMessage = defineContract({
  name: 'SendMessage',
  proto: 'SendMessageRequest',
  aliases: ['message/send'],
  surface: 'a2a',
  summary: 'Send a message to the agent; returns the task it started (or a direct message).',
  permission: 'task:write',
  params: SendMessageRequest,
  result: SendMessageResponse,
  v03: { name: 'message/send', params: V03MessageSendParams, decode: decodeV03Send, encode: sendResultToV03 },
  // An inline taskPushNotificationConfig is registered by the task service with the task's creation.
});

export const sendStreamingMessage = defineStreamContract({
  name: 'SendStreamingMessage',
  proto: 'SendMessageRequest',
  aliases: ['message/stream'],
  surface: 'a2a',
  summary: 'Send a message and stream the task: the task first, then its status and artifact updates.',
  permission: 'task:write',
  params: SendMessageRequest,
  result: StreamResponse,
  v03: { name: 'message/stream', params: V03MessageSendParams, decode: decodeV03Send, encode: streamResponseToV03 },
});

/** The message family: every row of message.contract.ts, in the table's order. */
export const MESSAGE_METHODS = {
  sendMessage,
  sendStreamingMessage,
} as const satisfies ContractFamily;
