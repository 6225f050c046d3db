/** Calling the built-in tools by their short names on a plain directory, for the coding tools' tests. */
import { BuiltinToolRunner, CommandConfinement } from '../../../../src/infrastructure/index.ts';
import type { SandboxInfo, ToolCallResult, ToolPreview } from '../../../../src/application/index.ts';
import type { ToolDefinition } from '../../../../src/domain/registry/tool.definition.ts';
import { BUILTIN_TOOLS } from '../../../../src/domain/registry/builtins.ts';

export const builtin = (name: string): ToolDefinition => {
  const tool = BUILTIN_TOOLS.find((t) => t.name === `builtin/${name}`);
  if (!tool) throw new Error(`no built-in tool ${name}`);
  return tool;
};

/** A sandbox that is just a directory (the file tools use nothing but its root). */
export const dirSandbox = (root: string): SandboxInfo => ({
  resource: 'local/app',
  kind: 'copy',
  root,
  source: root,
  baseCommit: '0'.repeat(40),
});

export function toolsAt(
  root: () => string,
  runner = new BuiltinToolRunner({ confinement: CommandConfinement.unconfined() }),
) {
  const sandbox = (): SandboxInfo => dirSandbox(root());
  return {
    call: (name: string, args: Record<string, unknown>): Promise<ToolCallResult> =>
      runner.run({
        tool: builtin(name),
        args,
        sandbox: sandbox(),
        signal: new AbortController().signal,
        timeoutMs: 10_000,
      }),
    preview: (name: string, args: Record<string, unknown>): Promise<ToolPreview> =>
      runner.preview({ tool: builtin(name), args, sandbox: sandbox(), signal: new AbortController().signal }),
  };
}
