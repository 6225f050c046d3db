/**
 * Layer rules from DESIGN.md §2. `npm run test:arch` fails on any forbidden import.
 * presentation (every client) -> the protocol client (src/protocol/client/index.ts) only; protocol -> application, domain;
 * application -> domain; domain -> nothing of ours; infrastructure -> application, domain;
 * main (composition root) -> anything.
 */
const layer = (name) => `^src/${name}/`;
module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', from: {}, to: { circular: true } },
    {
      name: 'domain-is-pure',
      severity: 'error',
      from: { path: layer('domain') },
      to: { path: '^src/(application|infrastructure|protocol|presentation|main)/' },
    },
    {
      name: 'only-the-domain-writes-a-plan',
      comment:
        'Outside src/domain a plan is deeply read-only (issue #38); writable() is for the domain functions that check each change.',
      severity: 'error',
      from: { pathNot: layer('domain') },
      to: { path: '^src/domain/plan/writable\\.ts$' },
    },
    {
      name: 'application-depends-on-domain-only',
      severity: 'error',
      from: { path: layer('application') },
      to: { path: '^src/(infrastructure|protocol|presentation|main)/' },
    },
    {
      name: 'infrastructure-depends-on-application-and-domain',
      severity: 'error',
      from: { path: layer('infrastructure') },
      to: { path: '^src/(protocol|presentation|main)/' },
    },
    {
      name: 'protocol-does-not-reach-infrastructure-or-presentation',
      severity: 'error',
      from: { path: layer('protocol') },
      to: { path: '^src/(infrastructure|presentation|main)/' },
    },
    {
      name: 'presentation-speaks-protocol-only',
      severity: 'error',
      from: { path: layer('presentation') },
      to: { path: '^src/(application|infrastructure|main)/' },
    },
    {
      name: 'presentation-uses-client-side-protocol-only',
      comment: 'The CLI talks to the backend through the A2A client, never through the server-side dispatcher.',
      severity: 'error',
      from: { path: layer('presentation') },
      to: { path: '^src/protocol/(server|transports/server)' },
    },
    {
      name: 'clients-import-only-the-protocol-client',
      comment:
        "Every client (the CLI, the TUI, the ACP bridge, the VS Code extension) talks to the backend only through the typed A2A client: of our code outside the presentation layer it may import src/protocol/client/index.ts alone — and the client's agent-env.ts (a local agent's environment, also exported by the index), which the CLI's early spawn loads before the client itself.",
      severity: 'error',
      from: { path: '^(src/presentation|clients/[^/]+/src)/' },
      to: { path: '^src/', pathNot: '^src/(presentation/|protocol/client/(index|agent-env)\\.ts$)' },
    },
    {
      name: 'editor-clients-keep-to-their-own-code',
      comment:
        'The VS Code extension is a client of its own: it imports the protocol client, never the CLI, the TUI or the ACP bridge.',
      severity: 'error',
      from: { path: '^clients/' },
      to: { path: '^src/presentation/' },
    },
    {
      name: 'vscode-api-behind-the-adapter',
      comment:
        'Only the thin adapter touches the vscode API, so everything else is tested against a real stdio agent without VS Code.',
      severity: 'error',
      from: { path: '^clients/vscode/src/', pathNot: '^clients/vscode/src/adapter/' },
      to: { path: '^vscode$', dependencyTypes: ['core', 'unknown', 'npm', 'npm-dev', 'type-only', 'undetermined'] },
    },
    {
      name: 'client-is-free-of-the-application',
      comment:
        'The exported client knows the methods by their contracts (names, schemas, permission); nothing of the server side, however indirectly.',
      severity: 'error',
      from: { path: '^src/protocol/client/' },
      to: { path: '^src/application/', reachable: true },
    },
    {
      name: 'nothing-imports-the-composition-root',
      severity: 'error',
      from: { pathNot: '^src/main/' },
      to: { path: '^src/main/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    exclude: { path: '^(dist|test|bench)/' },
  },
};
