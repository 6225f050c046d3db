/** A dead local agent: every request after it died is told how it died, as the ones under way were. */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import {
  A2AClient,
  A2ATransportError,
  StdioClientTransport,
  healthCheck,
} from '../../../../src/protocol/client/index.ts';

const dir = mkdtempSync(join(tmpdir(), 'ca-stdio-exit-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('the stdio transport after the agent died', () => {
  it('refuses a later request with the way the agent ended', async () => {
    const client = await A2AClient.local({
      extraArgs: ['--data-dir', dir],
      env: { ...process.env, CLEVERAGENTS_DATA_DIR: dir },
    });
    const transport = client.transport as StdioClientTransport;
    await client.call(healthCheck, {});
    (transport as unknown as { child: { kill(s: string): void } }).child.kill('SIGKILL');
    assert.deepEqual(await transport.exited, { code: null, signal: 'SIGKILL' });
    await assert.rejects(client.call(healthCheck, {}), (err: unknown) => {
      assert.ok(err instanceof A2ATransportError);
      assert.match(err.message, /^the agent process exited \(SIGKILL\)/);
      return true;
    });
    await client.close();
  });
});
