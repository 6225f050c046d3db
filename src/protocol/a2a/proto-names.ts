import { AppError } from '../../domain/errors.ts';

/**
 * ProtoJSON parsers must accept a field's original proto name as well as its lowerCamelCase JSON
 * name (protobuf JSON mapping; A2A §5). Our schemas speak the JSON names, so the standard methods'
 * params pass through `normaliseProtoNames` first: proto names become JSON names, at every level
 * of the request. Results keep the JSON names.
 *
 * The table is the request side of the normative a2a.proto (v1.0), field for field: each message
 * lists its fields' proto names and, for fields that hold another message, that message's name.
 * `google.protobuf.Struct`/`Value` fields (metadata, a data part) hold the caller's own keys and are
 * never rewritten. test/unit/protocol/a2a/proto-names.test.ts checks the table against the proto.
 */
export const PROTO_REQUEST_MESSAGES = {
  SendMessageRequest: { tenant: null, message: 'Message', configuration: 'SendMessageConfiguration', metadata: null },
  SendMessageConfiguration: {
    accepted_output_modes: null,
    task_push_notification_config: 'TaskPushNotificationConfig',
    history_length: null,
    return_immediately: null,
  },
  Message: {
    message_id: null,
    context_id: null,
    task_id: null,
    role: null,
    parts: 'Part',
    metadata: null,
    extensions: null,
    reference_task_ids: null,
  },
  Part: { text: null, raw: null, url: null, data: null, metadata: null, filename: null, media_type: null },
  TaskPushNotificationConfig: {
    tenant: null,
    id: null,
    task_id: null,
    url: null,
    token: null,
    authentication: 'AuthenticationInfo',
  },
  AuthenticationInfo: { scheme: null, credentials: null },
  GetTaskRequest: { tenant: null, id: null, history_length: null },
  ListTasksRequest: {
    tenant: null,
    context_id: null,
    status: null,
    page_size: null,
    page_token: null,
    history_length: null,
    status_timestamp_after: null,
    include_artifacts: null,
  },
  CancelTaskRequest: { tenant: null, id: null, metadata: null },
  SubscribeToTaskRequest: { tenant: null, id: null },
  GetTaskPushNotificationConfigRequest: { tenant: null, task_id: null, id: null },
  DeleteTaskPushNotificationConfigRequest: { tenant: null, task_id: null, id: null },
  ListTaskPushNotificationConfigsRequest: { tenant: null, task_id: null, page_size: null, page_token: null },
  GetExtendedAgentCardRequest: { tenant: null },
} as const satisfies Record<string, Record<string, string | null>>;

/** The proto message a standard method's params are (the rpc's request type). */
export type ProtoMessageName = keyof typeof PROTO_REQUEST_MESSAGES;

/** protoc's default json_name: drop each underscore and upper-case the letter after it. */
export function jsonName(protoName: string): string {
  return protoName.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
}

interface Compiled {
  /** proto name → JSON name, only for names that differ. */
  rename: ReadonlyMap<string, string>;
  /** JSON name → message type of a nested message field. */
  children: ReadonlyMap<string, Compiled>;
}

const compiled = new Map<string, Compiled>();
for (const name of Object.keys(PROTO_REQUEST_MESSAGES)) compiled.set(name, { rename: new Map(), children: new Map() });
for (const [name, fields] of Object.entries(PROTO_REQUEST_MESSAGES) as [string, Record<string, string | null>][]) {
  const c = compiled.get(name) as { rename: Map<string, string>; children: Map<string, Compiled> };
  for (const [field, child] of Object.entries(fields)) {
    const json = jsonName(field);
    if (json !== field) c.rename.set(field, json);
    if (child) c.children.set(json, compiled.get(child) as Compiled);
  }
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The params with every proto field name replaced by its JSON name. Returns the input itself when
 * nothing is renamed (the common case costs no allocation). A field given under both names with
 * different values is -32602: the request is ambiguous.
 */
export function normaliseProtoNames(message: ProtoMessageName, params: unknown): unknown {
  return normalise(compiled.get(message) as Compiled, params, '');
}

function normalise(type: Compiled, value: unknown, path: string): unknown {
  if (!isPlainObject(value)) return value;
  let out: Record<string, unknown> | undefined;
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    const v = value[key];
    const json = type.rename.get(key);
    const child = type.children.get(json ?? key);
    let nv = v;
    if (child) {
      const at = path ? `${path}.${json ?? key}` : (json ?? key);
      if (Array.isArray(v)) {
        let arr: unknown[] | undefined;
        for (let i = 0; i < v.length; i++) {
          const item = normalise(child, v[i], `${at}.${i}`);
          if (item !== v[i]) (arr ??= v.slice())[i] = item;
        }
        if (arr) nv = arr;
      } else {
        nv = normalise(child, v, at);
      }
    }
    if (json === undefined && nv === v) continue;
    out ??= { ...value };
    if (json === undefined) {
      out[key] = nv;
      continue;
    }
    if (Object.hasOwn(value, json) && !sameValue(child ? normalise(child, value[json], '') : value[json], nv)) {
      const field = path ? `${path}.${json}` : json;
      throw new AppError(
        'INVALID_PARAMS',
        `Invalid parameters: ${field}: given twice, as ${key} and as ${json}, with different values`,
        {
          fields: [{ field, description: `given as both ${key} and ${json} with different values; send one` }],
        },
      );
    }
    delete out[key];
    // The JSON name's own value wins (already normalised when it is visited, if it needs it).
    if (!Object.hasOwn(value, json)) out[json] = nv;
  }
  return out ?? value;
}

function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  try {
    return JSON.stringify(a) === JSON.stringify(b);
  } catch {
    return false;
  }
}
