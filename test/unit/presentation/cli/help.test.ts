import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import { COMMAND_INDEX } from '../../../../src/presentation/cli/command-index.ts';
import { helpProgram, printHelp } from '../../../../src/presentation/cli/help.ts';
import { buildProgram, runCli, type CliIo } from '../../../../src/presentation/cli/index.ts';
import { commandIndex } from '../../../support/command-index.ts';

const host = { version: '1.2.3', serve: async () => 0 };

function captureIo(): { io: CliIo; out: () => string } {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let text = '';
  stdout.on('data', (b: Buffer) => (text += b.toString()));
  const io = { stdout, stderr, stdin: new PassThrough(), env: {} } as unknown as CliIo;
  return { io, out: () => text };
}

describe('agents --help without loading the commands', () => {
  it('lists the commands as the full command tree does (regenerate with node test/support/write-command-index.ts --write)', () => {
    assert.deepEqual(COMMAND_INDEX, commandIndex(buildProgram(host)));
  });

  it('prints what the full CLI prints for --help, and exits 0', async () => {
    const full = captureIo();
    assert.equal(await runCli(['node', 'agents', '--help'], host, full.io), 0);
    const light = captureIo();
    assert.equal(printHelp(host.version, light.io), 0);
    assert.ok(full.out().includes('Commands:'));
    assert.equal(light.out(), full.out());
  });

  for (const width of [40, 80, 132, 250])
    it(`renders the same text at ${width} columns`, () => {
      const { io } = captureIo();
      const [a, b] = [helpProgram(host.version, io), buildProgram(host, undefined, io)].map((p) =>
        p.configureHelp({ ...p.configureHelp(), helpWidth: width }).helpInformation(),
      );
      assert.equal(a, b);
    });
});
