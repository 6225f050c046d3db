/**
 * The layer rules of .dependency-cruiser.cjs (`npm run test:arch`) catch what they are there for:
 * a tree laid out like ours, with a client that reaches past the protocol client, fails the check,
 * and the same tree with only the allowed imports passes.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const DEPCRUISE = join(REPO, 'node_modules', '.bin', 'depcruise');
const roots: string[] = [];

after(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

/** A small tree with our layout: the protocol client, a domain module, and the files given. */
function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'ca-arch-'));
  roots.push(root);
  const all: Record<string, string> = {
    'tsconfig.json': JSON.stringify({
      compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', jsx: 'react-jsx', strict: true },
    }),
    'src/domain/channel.ts': 'export const channel = 1;\n',
    'src/protocol/a2a/contracts.ts': 'export const contracts = 1;\n',
    'src/protocol/client/index.ts': "export { contracts } from '../a2a/contracts.js';\nexport const client = 1;\n",
    'src/presentation/cli/connect.ts': "export { client } from '../../protocol/client/index.js';\n",
    'clients/vscode/src/adapter/extension.ts': "import * as vscode from 'vscode';\nexport const api = vscode;\n",
    ...files,
  };
  for (const [path, text] of Object.entries(all)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

function cruise(root: string): { ok: boolean; output: string } {
  const r = spawnSync(
    DEPCRUISE,
    ['src', 'clients/vscode/src', '--config', join(REPO, '.dependency-cruiser.cjs'), '--output-type', 'err'],
    { cwd: root, encoding: 'utf8' },
  );
  return { ok: r.status === 0, output: `${r.stdout}${r.stderr}` };
}

describe('the architecture rules for clients', () => {
  it('let the TUI, the ACP bridge and the extension use the protocol client (and the CLI its own code)', () => {
    const root = tree({
      'src/presentation/tui/app.tsx': "export { client } from '../../protocol/client/index.js';\n",
      'src/presentation/acp/bridge.ts':
        "export { client } from '../../protocol/client/index.js';\nexport { client as c } from '../cli/connect.js';\n",
      'clients/vscode/src/core/connection.ts': "export { client } from '../../../../src/protocol/client/index.js';\n",
    });
    const r = cruise(root);
    assert.ok(r.ok, r.output);
  });

  it('fail a client that imports the domain or a protocol module other than the client', () => {
    const root = tree({
      'src/presentation/tui/app.tsx': "export { channel } from '../../domain/channel.js';\n",
      'src/presentation/acp/bridge.ts': "export { contracts } from '../../protocol/a2a/contracts.js';\n",
      'clients/vscode/src/core/connection.ts': "export { channel } from '../../../../src/domain/channel.js';\n",
    });
    const r = cruise(root);
    assert.equal(r.ok, false);
    assert.match(r.output, /clients-import-only-the-protocol-client: src\/presentation\/tui\/app\.tsx → src\/domain/);
    assert.match(
      r.output,
      /clients-import-only-the-protocol-client: src\/presentation\/acp\/bridge\.ts → src\/protocol\/a2a/,
    );
    assert.match(
      r.output,
      /clients-import-only-the-protocol-client: clients\/vscode\/src\/core\/connection\.ts → src\/domain/,
    );
  });

  it('fail the extension importing the CLI, or the vscode API outside its adapter', () => {
    const root = tree({
      'clients/vscode/src/core/chat.ts':
        "import * as vscode from 'vscode';\nexport { client } from '../../../../src/presentation/cli/connect.js';\nexport const api = vscode;\n",
    });
    const r = cruise(root);
    assert.equal(r.ok, false);
    assert.match(
      r.output,
      /editor-clients-keep-to-their-own-code: clients\/vscode\/src\/core\/chat\.ts → src\/presentation/,
    );
    assert.match(r.output, /vscode-api-behind-the-adapter: clients\/vscode\/src\/core\/chat\.ts → vscode/);
  });
});
