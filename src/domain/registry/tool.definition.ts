import { z } from 'zod';
import { EntityName } from './names.ts';
import { Description, JsonSchemaObject } from './definition-fields.ts';

export const TOOL_SOURCE = /^(builtin|command|mcp:[a-z][a-z0-9_-]*)$/;
export const ToolDefinition = z
  .object({
    name: EntityName,
    description: Description.optional(),
    source: z.string().regex(TOOL_SOURCE, 'must be builtin, command or mcp:<server>'),
    command: z
      .object({
        program: z.string().min(1),
        args: z.array(z.string()).optional(),
        timeoutMs: z.number().int().positive().max(3_600_000).optional(),
      })
      .strict()
      .optional(),
    /** source mcp:<server>: the server's name of the tool (default: the last segment of name). */
    mcpTool: z.string().min(1).max(200).optional(),
    inputSchema: JsonSchemaObject,
    readOnly: z.boolean(),
    writes: z.boolean(),
    checkpoint: z.boolean().optional(),
  })
  .strict()
  .superRefine((t, ctx) => {
    if (t.readOnly && t.writes)
      ctx.addIssue({ code: 'custom', path: ['writes'], message: 'a read-only tool cannot write' });
    if (t.source === 'command' && !t.command)
      ctx.addIssue({ code: 'custom', path: ['command'], message: 'a command tool needs command.program' });
    if (t.source !== 'command' && t.command)
      ctx.addIssue({ code: 'custom', path: ['command'], message: 'only source: command takes a command' });
    if (t.mcpTool !== undefined && !t.source.startsWith('mcp:'))
      ctx.addIssue({ code: 'custom', path: ['mcpTool'], message: 'only source: mcp:<server> takes mcpTool' });
  });
export type ToolDefinition = z.infer<typeof ToolDefinition>;
