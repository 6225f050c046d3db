/**
 * Layer rules from DESIGN.md §2. `npm run test:arch` fails on any forbidden import.
 * presentation -> protocol (client side) only; protocol -> application, domain;
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
