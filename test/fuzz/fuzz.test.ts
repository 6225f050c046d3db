/**
 * The seeded fuzzer in `npm test`: a few thousand hostile and random cases over HTTP and over
 * stdio (see engine.ts for what each answer must satisfy). The seed is printed; replay a failure
 * with `npm run fuzz -- --seed N --count M`. CA_FUZZ_SEED and CA_FUZZ_COUNT override the defaults.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { describe, it } from 'node:test';
import { startHttpServer, tempDir } from '../support/harness.ts';
import { fuzzHttp, fuzzStdio } from './engine.ts';
import { RawStdioAgent } from '../support/raw-agent.ts';

const seed = Number(process.env['CA_FUZZ_SEED'] ?? Math.floor(Math.random() * 2 ** 31));
const count = Number(process.env['CA_FUZZ_COUNT'] ?? 2000);

describe(`fuzzer (seed ${seed}; replay: npm run fuzz -- --seed ${seed} --count ${count})`, () => {
  it(`survives ${count} cases over HTTP`, async (t) => {
    t.diagnostic(`seed ${seed}`);
    const dir = tempDir();
    // The failed-login throttle would answer the server token 429 after the bad-token cases (as it
    // should: see test/contract/access-throttle.test.ts); the fuzzer judges every other answer.
    const server = await startHttpServer({
      dataDir: dir,
      env: { ...process.env, CLEVERAGENTS_AUTH_FAILURES_PER_MINUTE: '0' },
    });
    try {
      const stats = await fuzzHttp(server, { seed, count });
      t.diagnostic(`answers: ${JSON.stringify(stats.answered)}`);
      assert.equal(stats.cases, count);
      assert.ok(stats.refused > 0);
      assert.equal(server.child.exitCode, null, 'the server is still running');
    } finally {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it(`survives ${count} cases over stdio`, async (t) => {
    t.diagnostic(`seed ${seed}`);
    const dir = tempDir();
    const agent = new RawStdioAgent(dir);
    try {
      await agent.initialize();
      const stats = await fuzzStdio(agent, { seed: seed + 1, count });
      t.diagnostic(`answers: ${JSON.stringify(stats.answered)}`);
      assert.equal(stats.cases, count);
      assert.ok(agent.alive, 'the agent is still running');
    } finally {
      await agent.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
