/**
 * The VS Code extension as it ships: its manifest (commands, views, menus, activation events,
 * settings), the bundle activated against a stand-in of the vscode API (every contributed command
 * has a handler; the chat view talks to a real local agent through the bundled client), and the
 * packaged .vsix that `.ci/run` builds with vsce.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { COMMANDS, PLAN_ITEM_COMMANDS, VIEWS } from '../../clients/vscode/src/core/commands.ts';
import { parseViewMessage } from '../../clients/vscode/src/core/chat-view-protocol.ts';
import { BIN } from '../support/cli.ts';
import { eventually } from '../support/harness.ts';
import { installVscodeStub } from '../support/vscode-stub.ts';
import { tempRoot } from '../support/vscode-core.ts';
import { readZip } from '../support/zip.ts';
import { ECHO_FIRST_TURN_HINT as HINT } from '../../src/application/actors/echo.actor.ts';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const EXT = join(REPO, 'clients/vscode');
const manifest = JSON.parse(readFileSync(join(EXT, 'package.json'), 'utf8'));
const root = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8'));

function checkManifest(m: any): void {
  assert.equal(m.name, 'cleveragents');
  assert.equal(m.publisher, 'cleveragents');
  assert.equal(m.license, 'Apache-2.0');
  assert.equal(m.main, './dist/extension.js');
  assert.equal(m.engines.vscode, `^${root.devDependencies['@types/vscode']}`);
  assert.deepEqual(
    m.contributes.commands.map((c: any) => [c.command, c.title, c.category]),
    COMMANDS.map((c) => [c.id, c.title, 'CleverAgents']),
  );
  assert.deepEqual(m.contributes.views[VIEWS.container], [
    { type: 'webview', id: VIEWS.chat, name: 'Chat' },
    { id: VIEWS.plans, name: 'Plans' },
  ]);
  assert.deepEqual(
    [...m.activationEvents].sort(),
    [`onView:${VIEWS.chat}`, `onView:${VIEWS.plans}`, ...COMMANDS.map((c) => `onCommand:${c.id}`)].sort(),
  );
}

describe('the extension manifest (clients/vscode/package.json)', () => {
  it('contributes exactly the core’s commands, both views, and activates on them', () => checkManifest(manifest));

  it('every menu entry names a contributed command; plan rows offer each operation when the plan allows it', () => {
    const ids = new Set(COMMANDS.map((c) => c.id));
    const menus = manifest.contributes.menus as Record<string, Array<{ command: string; when: string }>>;
    for (const [where, entries] of Object.entries(menus))
      for (const e of entries) assert.ok(ids.has(e.command as never), `${where}: ${e.command}`);
    const item = menus['view/item/context'] ?? [];
    for (const { command, when } of PLAN_ITEM_COMMANDS)
      assert.ok(
        item.some((e) => e.command === command && e.when === `view == ${VIEWS.plans} && viewItem =~ /${when}/`),
        `${command} on plan rows`,
      );
    assert.ok(menus['view/title']?.some((e) => e.command === 'cleveragents.refreshPlans'));
    assert.equal(manifest.contributes.viewsContainers.activitybar[0].id, VIEWS.container);
  });

  it('has the four settings, and the server token is none of them; no dependencies of its own', () => {
    const props = manifest.contributes.configuration.properties;
    assert.deepEqual(Object.keys(props).sort(), [
      'cleveragents.agentPath',
      'cleveragents.dataDir',
      'cleveragents.namespace',
      'cleveragents.serverUrl',
    ]);
    assert.equal(props['cleveragents.agentPath'].default, 'agents');
    assert.equal(props['cleveragents.serverUrl'].default, '');
    assert.equal(manifest.dependencies, undefined);
    assert.equal(manifest.devDependencies, undefined);
  });
});

describe('the webview’s messages are checked before they are acted on', () => {
  it('keeps the known shapes and drops the rest', () => {
    assert.deepEqual(parseViewMessage({ type: 'send', text: 'hi' }), { type: 'send', text: 'hi' });
    assert.deepEqual(parseViewMessage({ type: 'answer', decision: 'reject', guidance: ' no ' }), {
      type: 'answer',
      decision: 'reject',
      guidance: ' no ',
    });
    assert.deepEqual(parseViewMessage({ type: 'answer', decision: 'approve', guidance: '' }), {
      type: 'answer',
      decision: 'approve',
    });
    for (const bad of [
      null,
      'send',
      { type: 'send' },
      { type: 'answer', decision: 'maybe' },
      { type: 'eval', code: 'x' },
    ])
      assert.equal(parseViewMessage(bad), undefined, JSON.stringify(bad));
  });
});

describe('the bundled extension against a stand-in of the vscode API', () => {
  const ROOT = tempRoot('agents-vscode-ext-');
  const stub = installVscodeStub({ 'cleveragents.agentPath': BIN, 'cleveragents.dataDir': join(ROOT, 'data') });
  let ext: { activate(ctx: unknown): Promise<void>; deactivate(): Promise<void> };

  before(() => {
    // The bundle CI packages: the same script, so what is tested is what ships.
    const built = spawnSync('npm', ['run', '--silent', 'vsix:build'], { cwd: REPO, encoding: 'utf8' });
    assert.equal(built.status, 0, built.stderr);
    ext = createRequire(import.meta.url)(join(EXT, 'dist/extension.js'));
  });

  after(async () => {
    await ext?.deactivate();
    rmSync(ROOT, { recursive: true, force: true });
  });

  it('activates, and registers every contributed command, the chat view, the plans tree and the diff documents', async () => {
    await ext.activate(stub.context);
    assert.deepEqual([...stub.commands.keys()].sort(), COMMANDS.map((c) => c.id).sort());
    assert.ok(stub.webviews.has(VIEWS.chat));
    assert.ok(stub.treeViews.has(VIEWS.plans));
    assert.ok(stub.contentProviders.has('cleveragents-diff'));
  });

  it('the chat view’s page has a strict CSP and loads only its own script', () => {
    const view = stub.webviewView();
    stub.webviews.get(VIEWS.chat).resolveWebviewView(view);
    const html: string = view.webview.html;
    const nonce = /script-src 'nonce-([^']+)'/.exec(html)?.[1];
    assert.ok(nonce, html);
    assert.match(html, /default-src 'none'/);
    assert.equal(html.match(/<script /g)?.length, 1);
    assert.match(html, new RegExp(`<script nonce="${nonce.replace(/[+/=]/g, '\\$&')}" src="[^"]*media/chat\\.js"`));
  });

  it('a message typed in the chat view reaches a real agent, and the answer streams back to the view', async () => {
    stub.toExtension?.({ type: 'ready' });
    stub.toExtension?.({ type: 'send', text: 'hello from the webview' });
    const events = await eventually(
      async () => {
        const all = stub.posted.flatMap((m) => m.events);
        return all.some((e: any) => e.type === 'state' && e.state === 'completed') ? all : undefined;
      },
      20_000,
      'the answer in the view',
    );
    const text = events
      .filter((e: any) => e.type === 'text')
      .map((e: any) => e.text)
      .join('');
    assert.equal(text, `You said: hello from the webview${HINT}`);
    assert.deepEqual(stub.errors, []);
  });

  it('a command that fails shows its message and hint, and nothing is thrown', async () => {
    await stub.commands.get('cleveragents.approvePlan')?.({ kind: 'plan', planId: 'nope', label: 'nope' });
    assert.equal(stub.errors.length, 1);
    assert.match(stub.errors[0] ?? '', /^CleverAgents: .*planId/);
  });
});

describe('the packaged .vsix', () => {
  const vsix = join(EXT, `cleveragents-${manifest.version}.vsix`);
  // .ci/run builds it before the tests (npm run vsix); a local `npm test` may not have.
  const present = existsSync(vsix);
  if (!present && process.env['CI']) throw new Error(`${vsix} is missing: .ci/run builds it with npm run vsix`);
  if (!present) console.error(`NOTICE: ${vsix} not built (npm run vsix); its checks are skipped`);

  it('ships the bundle, the manifest, README, LICENSE, CHANGELOG and media, and no sources', { skip: !present }, () => {
    const names = [...readZip(vsix).keys()].filter((n) => n.startsWith('extension/')).sort();
    assert.deepEqual(names, [
      'extension/LICENSE.txt',
      'extension/changelog.md',
      'extension/dist/extension.js',
      'extension/dist/extension.js.map',
      'extension/media/chat.css',
      'extension/media/chat.js',
      'extension/media/icon.svg',
      'extension/package.json',
      'extension/readme.md',
    ]);
  });

  it('its manifest is the one asked for: commands, views, activation events, main', { skip: !present }, () => {
    const zip = readZip(vsix);
    checkManifest(JSON.parse(zip.get('extension/package.json')?.toString('utf8') ?? '{}'));
    const vsixManifest = zip.get('extension.vsixmanifest')?.toString('utf8') ?? '';
    assert.match(vsixManifest, /<Identity [^>]*Id="cleveragents"[^>]*Publisher="cleveragents"/);
    assert.match(vsixManifest, /Microsoft\.VisualStudio\.Code/);
  });
});
