/** The tests of #38: end-to-end files with their own `run`/`json` helpers, and fixed sleeps. */
import ts from 'typescript';
import { type Finding, type Measure, byPlace } from './measure.ts';
import { type SourceFile, type Sources, forEachNode, lineOf, unparen } from './sources.ts';

const E2E = /^test\/e2e\/.*\.test\.tsx?$/;
const HELPERS = new Set(['run', 'json']);

function isFunctionValue(node: ts.Expression | undefined): boolean {
  return node !== undefined && (ts.isArrowFunction(node) || ts.isFunctionExpression(node));
}

/** Helpers named run/json declared in `file` (a function, or a variable holding one), with their lines. */
function ownHelpers(file: SourceFile): { name: string; line: number }[] {
  const found: { name: string; line: number }[] = [];
  forEachNode(file.ast, (node) => {
    if (ts.isFunctionDeclaration(node) && node.name && HELPERS.has(node.name.text)) {
      found.push({ name: node.name.text, line: lineOf(node) });
    } else if (
      ts.isVariableDeclaration(node) &&
      ts.isIdentifier(node.name) &&
      HELPERS.has(node.name.text) &&
      isFunctionValue(node.initializer && unparen(node.initializer))
    ) {
      found.push({ name: node.name.text, line: lineOf(node) });
    }
  });
  return found;
}

/** End-to-end test files that define their own `run(`/`json(`, out of all end-to-end test files. */
export function e2eOwnHelpers(sources: Sources): Measure {
  const e2e = sources.files.filter((f) => E2E.test(f.path));
  const findings: Finding[] = [];
  for (const file of e2e) {
    const helpers = ownHelpers(file);
    const first = helpers[0];
    if (!first) continue;
    const names = [...new Set(helpers.map((h) => h.name))].map((n) => `${n}(`).join(', ');
    findings.push({ file: file.path, line: first.line, what: names });
  }
  return {
    id: 'e2e-own-helpers',
    title: 'End-to-end test files with their own run(/json(',
    count: findings.length,
    outOf: e2e.length,
    findings: findings.sort(byPlace),
  };
}

function isSetTimeoutCall(node: ts.Node): node is ts.CallExpression {
  return ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'setTimeout';
}

/**
 * `new Promise((r) => setTimeout(r, ms))`: an executor whose whole body is a timer that resolves
 * it. Returns the duration argument. An executor that also hands `r` to something else (a waiter
 * list, an event) waits for that, with the timer as a backstop: not a sleep.
 */
function promisedTimer(node: ts.Node): ts.Expression | undefined {
  if (!ts.isNewExpression(node) || !ts.isIdentifier(node.expression) || node.expression.text !== 'Promise') return;
  const executor = node.arguments?.[0];
  if (!executor || !(ts.isArrowFunction(executor) || ts.isFunctionExpression(executor))) return;
  const resolve = executor.parameters[0]?.name;
  if (!resolve || !ts.isIdentifier(resolve)) return;
  let body: ts.Node = executor.body;
  if (ts.isBlock(body)) {
    const only = body.statements.length === 1 ? body.statements[0] : undefined;
    if (!only || !ts.isExpressionStatement(only)) return;
    body = only.expression;
  }
  body = unparen(body as ts.Expression);
  if (!isSetTimeoutCall(body)) return;
  const [callback, ms] = body.arguments;
  return callback && ts.isIdentifier(callback) && callback.text === resolve.text ? ms : undefined;
}

/** The single expression a function returns, if its body is just that. */
function returnedExpression(fn: ts.SignatureDeclaration): ts.Expression | undefined {
  if (!ts.isArrowFunction(fn) && !ts.isFunctionExpression(fn) && !ts.isFunctionDeclaration(fn)) return;
  const body = fn.body;
  if (!body) return;
  if (!ts.isBlock(body)) return unparen(body);
  const only = body.statements.length === 1 ? body.statements[0] : undefined;
  return only && ts.isReturnStatement(only) && only.expression ? unparen(only.expression) : undefined;
}

/**
 * Whether `callee` is a timer that resolves after its first argument's milliseconds: node's
 * `setTimeout` from timers/promises (under any local name), or a function whose body is
 * `new Promise((r) => setTimeout(r, ms))` — found through the type checker, so an imported
 * `sleep` counts and a `delay` that means something else does not.
 */
function isSleepFunction(callee: ts.Expression, checker: ts.TypeChecker): boolean {
  let symbol = checker.getSymbolAtLocation(callee);
  if (!symbol) return false;
  if (symbol.flags & ts.SymbolFlags.Alias) symbol = checker.getAliasedSymbol(symbol);
  for (const decl of symbol.declarations ?? []) {
    const file = decl.getSourceFile().fileName.replace(/\\/g, '/');
    if (symbol.name === 'setTimeout' && /\/timers\/promises\.d\.ts$/.test(file)) return true;
    const fn: ts.Node = ts.isVariableDeclaration(decl) && decl.initializer ? unparen(decl.initializer) : decl;
    if (!ts.isArrowFunction(fn) && !ts.isFunctionExpression(fn) && !ts.isFunctionDeclaration(fn)) continue;
    const returned = returnedExpression(fn);
    if (returned && promisedTimer(returned)) return true;
  }
  return false;
}

/** The duration of an awaited sleep at `node`, if `node` is one. */
function sleepDuration(node: ts.Expression, checker: ts.TypeChecker): ts.Expression | undefined {
  const direct = promisedTimer(node);
  if (direct) return direct;
  // A sleep is called by its name (`sleep(50)`, `delay(20)`); asking the checker about
  // `client.call(…)` would type half the suite for nothing.
  if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && isSleepFunction(node.expression, checker)) {
    return node.arguments[0];
  }
  return undefined;
}

function isFixedDuration(ms: ts.Expression | undefined): boolean {
  if (!ms) return false;
  const e = unparen(ms);
  return ts.isNumericLiteral(e);
}

/**
 * Whether `node` runs inside a `while`, `do` or `for (;;)` of its own function: a poll, not a
 * single wait. A `for…of` walks items (a slow consumer of a stream), it does not poll.
 */
function inPollingLoop(node: ts.Node): boolean {
  for (let n = node.parent; n && !ts.isFunctionLike(n); n = n.parent) {
    if (ts.isWhileStatement(n) || ts.isDoStatement(n) || ts.isForStatement(n)) return true;
  }
  return false;
}

/**
 * Awaited sleeps of a fixed number of milliseconds in test/ (a scripted model's latency, whose
 * duration is data, is not one): a wait for time to pass instead of for the event itself. Each
 * says whether it sits in a polling loop or waits once and hopes.
 */
export function fixedSleeps(sources: Sources): Measure {
  const findings: Finding[] = [];
  let polls = 0;
  for (const file of sources.files) {
    if (file.area !== 'test') continue;
    forEachNode(file.ast, (node) => {
      if (!ts.isAwaitExpression(node)) return;
      const ms = sleepDuration(unparen(node.expression), sources.checker);
      if (!isFixedDuration(ms)) return;
      const poll = inPollingLoop(node);
      if (poll) polls++;
      findings.push({
        file: file.path,
        line: lineOf(node),
        what: `${poll ? 'poll' : 'once'}: ${node.getText(file.ast).replace(/\s+/g, ' ')}`,
      });
    });
  }
  return {
    id: 'fixed-sleeps',
    title: 'Fixed sleeps in tests',
    count: findings.length,
    note: `${polls} in polling loops`,
    findings: findings.sort(byPlace),
  };
}

const UNIT = /^test\/unit\/(application|domain)\/.*\.test\.tsx?$/;
/** What a unit test of the application or the domain must not import: I/O, or what does I/O for it. */
const IO_IMPORTS = [
  /^node:(fs|fs\/promises|child_process|http|https|net)$/,
  /^(better-sqlite3|pg)$/,
  /\/src\/(infrastructure|main)\//,
  /\/support\/(git|harness|fake-llm|fake-oidc|postgres|cli|modes|team-server)\.ts$/,
];

/** Unit test files of the application and the domain that import I/O (those belong in test/integration/). */
export function unitTestsWithIo(sources: Sources): Measure {
  const units = sources.files.filter((f) => UNIT.test(f.path));
  const findings: Finding[] = [];
  for (const file of units) {
    const io: string[] = [];
    forEachNode(file.ast, (node) => {
      if (!ts.isImportDeclaration(node) || !ts.isStringLiteral(node.moduleSpecifier)) return;
      const spec = node.moduleSpecifier.text;
      if (IO_IMPORTS.some((re) => re.test(spec))) io.push(spec);
    });
    if (io.length > 0) findings.push({ file: file.path, what: io.join(', ') });
  }
  return {
    id: 'unit-tests-with-io',
    title: 'Unit tests (application, domain) importing I/O',
    count: findings.length,
    outOf: units.length,
    findings: findings.sort(byPlace),
  };
}
