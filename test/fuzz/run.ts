/**
 * Long fuzz runs: `npm run fuzz -- --count 100000 --seed 42 [--transport http|stdio|both]`.
 * Starts its own server(s) on 127.0.0.1 with a temporary data dir; exits 1 with the failing case.
 */
import { rmSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { startHttpServer, tempDir } from '../support/harness.ts';
import { fuzzHttp, fuzzStdio } from './engine.ts';
import { RawStdioAgent } from '../support/raw-agent.ts';

const log = (line: string): void => void process.stderr.write(`\r${line}   `);

async function main(
  values: { count: string; seed?: string | undefined; transport: string; batch: string },
  count: number,
  seed: number,
  batchSize: number,
): Promise<number> {
  process.stderr.write(`fuzz: seed ${seed}, ${count} cases per transport (${values.transport})\n`);
  const started = Date.now();
  if (values.transport !== 'stdio') {
    const dir = tempDir();
    // The failed-login throttle would answer the server token 429 after the bad-token cases (as it
    // should: see test/contract/access-throttle.test.ts); the fuzzer judges every other answer.
    const server = await startHttpServer({
      dataDir: dir,
      env: { ...process.env, CLEVERAGENTS_AUTH_FAILURES_PER_MINUTE: '0' },
    });
    try {
      const stats = await fuzzHttp(server, { seed, count, batchSize, log });
      process.stderr.write(
        `\nhttp: ${stats.cases} cases in ${stats.batches} batches; answers ${JSON.stringify(stats.answered)}\n`,
      );
    } finally {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  }
  if (values.transport !== 'http') {
    const dir = tempDir();
    const agent = new RawStdioAgent(dir);
    try {
      await agent.initialize();
      const stats = await fuzzStdio(agent, { seed: seed + 1, count, batchSize, log });
      process.stderr.write(
        `\nstdio: ${stats.cases} cases in ${stats.batches} batches; answers ${JSON.stringify(stats.answered)}\n`,
      );
    } finally {
      await agent.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  }
  process.stderr.write(`fuzz: done in ${((Date.now() - started) / 1000).toFixed(1)} s (seed ${seed})\n`);
  return 0;
}

function cli(): void {
  const { values } = parseArgs({
    options: {
      count: { type: 'string', default: '10000' },
      seed: { type: 'string' },
      transport: { type: 'string', default: 'both' },
      batch: { type: 'string', default: '100' },
    },
  });
  const count = Number(values.count);
  const seed = values.seed !== undefined ? Number(values.seed) : Math.floor(Math.random() * 2 ** 31);
  const batchSize = Number(values.batch);
  if (
    !Number.isSafeInteger(count) ||
    count < 1 ||
    !Number.isSafeInteger(seed) ||
    !Number.isSafeInteger(batchSize) ||
    batchSize < 1
  ) {
    process.stderr.write('usage: npm run fuzz -- [--count N] [--seed N] [--transport http|stdio|both] [--batch N]\n');
    process.exit(2);
  }
  main(values, count, seed, batchSize).then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`\nfuzz FAILED (seed ${seed}): ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
}

// `node --test` runs every file under a test/ directory: there, this CLI does nothing
// (fuzz.test.ts is the fuzzer's test).
if (process.env['NODE_TEST_CONTEXT'] === undefined) cli();
