/**
 * The shapes of #38 in src/: one-line forwarders, plans changed outside the domain,
 * `(err as Error).message`, `definition as X` casts, and one file name in several layers.
 */
import ts from 'typescript';
import { type Finding, type Measure, byPlace } from './measure.ts';
import { type SourceFile, type Sources, forEachNode, lineOf, unparen } from './sources.ts';

function isPublic(member: ts.MethodDeclaration): boolean {
  if (ts.isPrivateIdentifier(member.name)) return false;
  const flags = ts.getCombinedModifierFlags(member);
  return (flags & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected)) === 0;
}

/** `this.x.y`, `this.x.y.z`, `x.y` — a method reached through a field or a value, not `this.y`. */
function isForwardedCallee(callee: ts.Expression): boolean {
  if (!ts.isPropertyAccessExpression(callee)) return false;
  let depth = 0;
  let root: ts.Expression = callee;
  while (ts.isPropertyAccessExpression(root)) {
    root = root.expression;
    depth++;
  }
  if (root.kind === ts.SyntaxKind.ThisKeyword) return depth >= 2;
  return ts.isIdentifier(root);
}

/** The expression a one-statement body hands on: `return e`, or `e;` for a method that returns nothing. */
function onlyExpression(body: ts.Block | undefined): ts.Expression | undefined {
  const only = body?.statements.length === 1 ? body.statements[0] : undefined;
  if (!only) return undefined;
  if (ts.isReturnStatement(only)) return only.expression;
  return ts.isExpressionStatement(only) ? only.expression : undefined;
}

/**
 * The whole body is `return this.x.y(a, b)` (or `return x.y(…)`, `return await …`, or the call
 * alone in a method that returns nothing) and every argument is one of the method's own
 * parameters, passed as it came.
 */
export function isForwarder(method: ts.MethodDeclaration): boolean {
  const handed = onlyExpression(method.body);
  if (!handed) return false;
  let returned = unparen(handed);
  if (ts.isAwaitExpression(returned)) returned = unparen(returned.expression);
  if (!ts.isCallExpression(returned) || !isForwardedCallee(returned.expression)) return false;
  const params = new Set(method.parameters.flatMap((p) => (ts.isIdentifier(p.name) ? [p.name.text] : [])));
  return returned.arguments.every((arg) => {
    const passed = ts.isSpreadElement(arg) ? arg.expression : arg;
    return ts.isIdentifier(passed) && params.has(passed.text);
  });
}

/** Public methods of classes in src/application that only forward, out of all their public methods. */
export function forwarders(sources: Sources): Measure {
  const findings: Finding[] = [];
  let publicMethods = 0;
  for (const file of sources.files) {
    if (file.layer !== 'application') continue;
    forEachNode(file.ast, (node) => {
      if (!ts.isClassLike(node)) return;
      const owner = node.name?.text ?? '(anonymous class)';
      for (const member of node.members) {
        if (!ts.isMethodDeclaration(member) || !member.body || !isPublic(member)) continue;
        publicMethods++;
        if (!isForwarder(member)) continue;
        const name = member.name.getText(file.ast);
        findings.push({ file: file.path, line: lineOf(member), what: `${owner}.${name}` });
      }
    });
  }
  findings.sort(byPlace);
  return {
    id: 'forwarders',
    title: 'One-line forwarder methods (application classes)',
    count: findings.length,
    outOf: publicMethods,
    findings,
  };
}

/** The domain's `Plan` type: a type alias or interface named Plan exported from a file in src/domain/. */
function planType(sources: Sources): ts.Type | undefined {
  const { checker } = sources;
  for (const file of sources.files) {
    if (file.layer !== 'domain') continue;
    const module = checker.getSymbolAtLocation(file.ast);
    const plan = module && checker.getExportsOfModule(module).find((s) => s.name === 'Plan');
    if (plan && plan.flags & (ts.SymbolFlags.TypeAlias | ts.SymbolFlags.Interface)) {
      return checker.getDeclaredTypeOfSymbol(plan);
    }
  }
  return undefined;
}

const ASSIGNMENTS = new Set([
  ts.SyntaxKind.EqualsToken,
  ts.SyntaxKind.PlusEqualsToken,
  ts.SyntaxKind.MinusEqualsToken,
  ts.SyntaxKind.AsteriskEqualsToken,
  ts.SyntaxKind.SlashEqualsToken,
  ts.SyntaxKind.QuestionQuestionEqualsToken,
  ts.SyntaxKind.BarBarEqualsToken,
  ts.SyntaxKind.AmpersandAmpersandEqualsToken,
]);

/** The target an assignment, `++`/`--` or `delete` changes, if it is one. */
function changedTarget(node: ts.Node): ts.Expression | undefined {
  if (ts.isBinaryExpression(node) && ASSIGNMENTS.has(node.operatorToken.kind)) return node.left;
  if (
    (ts.isPrefixUnaryExpression(node) || ts.isPostfixUnaryExpression(node)) &&
    (node.operator === ts.SyntaxKind.PlusPlusToken || node.operator === ts.SyntaxKind.MinusMinusToken)
  ) {
    return node.operand;
  }
  if (ts.isDeleteExpression(node)) return node.expression;
  return undefined;
}

/** Whether some object on the way down `target`'s chain (`plan` in `plan.steps[0].state`) is a plan. */
function reachesPlan(target: ts.Expression, plan: ts.Type, checker: ts.TypeChecker): boolean {
  for (let n = unparen(target); ts.isPropertyAccessExpression(n) || ts.isElementAccessExpression(n);) {
    n = unparen(n.expression);
    if (n.kind === ts.SyntaxKind.ThisKeyword) return false; // a class's own field, never a plan
    if (checker.getTypeAtLocation(n) === plan) return true;
  }
  return false;
}

/**
 * Assignments (and `++`, `--`, `delete`) outside src/domain/ whose target is a field of an
 * expression the type checker types as the domain's `Plan` (`plan.waiting = undefined`), and,
 * as a second measure, those deeper in a plan (`plan.usage.wallMs = …`, `plan.sandboxes[i] = …`).
 */
export function planAssignments(sources: Sources): Measure[] {
  const plan = planType(sources);
  const direct: Finding[] = [];
  const deeper: Finding[] = [];
  if (plan) {
    for (const file of sources.files) {
      if (file.area !== 'src' || file.layer === 'domain') continue;
      forEachNode(file.ast, (node) => {
        const target = changedTarget(node);
        if (!target) return;
        const field = unparen(target);
        if (!ts.isPropertyAccessExpression(field) && !ts.isElementAccessExpression(field)) return;
        if (!reachesPlan(field, plan, sources.checker)) return;
        const isDirect = sources.checker.getTypeAtLocation(unparen(field.expression)) === plan;
        (isDirect ? direct : deeper).push({
          file: file.path,
          line: lineOf(node),
          what: node.getText(file.ast).split('\n')[0] ?? '',
        });
      });
    }
  }
  return [
    {
      id: 'plan-assignments',
      title: 'Assignments to Plan fields outside src/domain/',
      count: direct.length,
      findings: direct.sort(byPlace),
    },
    {
      id: 'plan-deep-assignments',
      title: 'Assignments deeper in a Plan outside src/domain/',
      count: deeper.length,
      findings: deeper.sort(byPlace),
    },
  ];
}

function castsIn(files: readonly SourceFile[], matches: (cast: ts.AsExpression) => boolean): Finding[] {
  const findings: Finding[] = [];
  for (const file of files) {
    forEachNode(file.ast, (node) => {
      if (ts.isAsExpression(node) && matches(node)) {
        const shown = ts.isParenthesizedExpression(node.parent) ? node.parent.parent : node;
        findings.push({ file: file.path, line: lineOf(node), what: shown.getText(file.ast).replace(/\s+/g, ' ') });
      }
    });
  }
  return findings.sort(byPlace);
}

/** `(err as Error).message` in src/, whatever the caught value is called. */
export function errorMessageCasts(sources: Sources): Measure {
  const src = sources.files.filter((f) => f.area === 'src');
  const findings = castsIn(src, (cast) => {
    const paren = cast.parent;
    return (
      ts.isTypeReferenceNode(cast.type) &&
      cast.type.typeName.getText() === 'Error' &&
      ts.isParenthesizedExpression(paren) &&
      ts.isPropertyAccessExpression(paren.parent) &&
      paren.parent.expression === paren &&
      paren.parent.name.text === 'message'
    );
  });
  return { id: 'error-message-casts', title: '(err as Error).message in src/', count: findings.length, findings };
}

/** `definition as X` / `e.definition as X` in src/application (a registry entry's definition, untyped). */
export function definitionCasts(sources: Sources): Measure {
  const application = sources.files.filter((f) => f.layer === 'application');
  const findings = castsIn(application, (cast) => {
    if (ts.isAsExpression(cast.expression)) return false; // `d as unknown as Y` counts once, as its inner cast
    const cast_ = unparen(cast.expression);
    const named = ts.isIdentifier(cast_) ? cast_.text : ts.isPropertyAccessExpression(cast_) ? cast_.name.text : '';
    return named === 'definition' && cast.type.getText() !== 'const';
  });
  return {
    id: 'definition-casts',
    title: '`definition as X` casts in src/application',
    count: findings.length,
    findings,
  };
}

/**
 * File names (index.ts, a layer's barrel, excepted) that appear in more than one layer of src/.
 * One finding per name; `what` lists the paths.
 */
export function duplicateBasenames(sources: Sources): Measure {
  const byName = new Map<string, SourceFile[]>();
  for (const file of sources.files) {
    if (file.area !== 'src' || file.layer === '') continue;
    const name = file.path.slice(file.path.lastIndexOf('/') + 1);
    if (/^index\.tsx?$/.test(name)) continue;
    byName.set(name, [...(byName.get(name) ?? []), file]);
  }
  const findings: Finding[] = [];
  for (const [name, files] of [...byName].sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (new Set(files.map((f) => f.layer)).size < 2) continue;
    findings.push({ file: name, what: files.map((f) => f.path).join(', ') });
  }
  return {
    id: 'duplicate-basenames',
    title: 'File names in more than one layer',
    count: findings.length,
    findings,
  };
}
