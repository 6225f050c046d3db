/**
 * `npm run health`: the measures of issue #38 (file and function sizes, forwarders, plans changed
 * outside the domain, untyped casts, duplicate file names, end-to-end helpers written again,
 * fixed sleeps in tests), counted from the sources with the TypeScript compiler API and printed
 * as a table (`--format json` for tools). CI prints it after the tests; it informs, it does not
 * fail the build. Runs from source on Node 24 (`node build/health.ts [--format table|json] [--root dir]`).
 */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { measureHealth, renderJson, renderTable } from './health/report.ts';

const USAGE = 'usage: node build/health.ts [--format table|json] [--root <project dir>]';

function main(argv: string[]): number {
  let values: { format?: string | undefined; root?: string | undefined; help?: boolean | undefined };
  try {
    ({ values } = parseArgs({
      args: argv,
      options: { format: { type: 'string' }, root: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    process.stderr.write(`health: ${err instanceof Error ? err.message : String(err)}\n${USAGE}\n`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const format = values.format ?? 'table';
  if (format !== 'table' && format !== 'json') {
    process.stderr.write(`health: --format must be table or json, not "${format}"\n${USAGE}\n`);
    return 2;
  }
  const root = resolve(values.root ?? resolve(import.meta.dirname, '..'));
  try {
    const report = measureHealth(root);
    process.stdout.write(format === 'json' ? renderJson(report) : renderTable(report));
    return 0;
  } catch (err) {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}

process.exitCode = main(process.argv.slice(2));
