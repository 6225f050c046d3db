import { z } from 'zod';
import { EntityName } from './names.ts';
import { AbsolutePath, Description, Ref } from './definition-fields.ts';

const McpServerName = z.string().regex(/^[a-z][a-z0-9_-]*$/, 'must be lowercase letters, digits, - and _');
const McpTimeouts = {
  /** How long connecting (and listing its tools) may take, in seconds (default 20). */
  connectTimeoutSeconds: z.number().positive().max(600, 'is at most 600').optional(),
  /** How long one tool call may take, in seconds (default 60). */
  callTimeoutSeconds: z.number().positive().max(3600, 'is at most 3600').optional(),
};

/**
 * An MCP server a skill brings: a program spoken to over stdio (`command`), or a streamable-HTTP
 * endpoint (`url`). Its tools are offered as `mcp:<name>/<tool>`.
 */
export const McpServer = z.union(
  [
    z
      .object({
        name: McpServerName,
        command: z.string().min(1),
        args: z.array(z.string()).optional(),
        /** Variables the server sees besides a minimal PATH/HOME (never the agent's own environment). */
        env: z.record(z.string(), z.string()).optional(),
        /** Its working directory (absolute; default: the agent's). */
        cwd: AbsolutePath.optional(),
        ...McpTimeouts,
      })
      .strict(),
    z
      .object({
        name: McpServerName,
        url: z
          .string()
          .url('must be an absolute URL')
          .refine((u) => /^https?:\/\//i.test(u), 'must be an http:// or https:// URL'),
        /** HTTP headers sent with every request (e.g. an Authorization header). */
        headers: z.record(z.string().regex(/^[A-Za-z0-9-]+$/, 'must be a header name'), z.string()).optional(),
        ...McpTimeouts,
      })
      .strict(),
  ],
  { message: 'an MCP server needs command (stdio) or url (streamable HTTP), with name' },
);
export type McpServer = z.infer<typeof McpServer>;

export const SkillDefinition = z
  .object({
    name: EntityName,
    description: Description.optional(),
    tools: z.array(Ref).optional(),
    includes: z.array(Ref).optional(),
    mcpServers: z.array(McpServer).optional(),
    instructions: z.string().max(100_000).optional(),
  })
  .strict();
export type SkillDefinition = z.infer<typeof SkillDefinition>;
