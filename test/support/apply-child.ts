/**
 * A process that applies one sandbox and says so, for test/e2e/apply-crash.test.ts to kill at any
 * point: argv[2] is JSON `{ root, sandbox, message }`. It prints `start` when the apply begins, then
 * the outcome as one JSON line.
 */
import { GitSandboxManager } from '../../src/infrastructure/index.ts';
import type { SandboxInfo } from '../../src/application/index.ts';

async function main(): Promise<void> {
  const { root, sandbox, message } = JSON.parse(process.argv[2] as string) as {
    root: string;
    sandbox: SandboxInfo;
    message: string;
  };
  const manager = new GitSandboxManager({ root });
  process.stdout.write('start\n');
  const outcome = await manager.apply(sandbox, message);
  process.stdout.write(`${JSON.stringify(outcome)}\n`);
}

// `node --test` loads every file under test/, this one too, without an argument: then it does nothing.
if (process.argv[2] !== undefined) await main();
