/** Sizes: source files over 400 lines, functions over 60 and over 80 lines. */
import ts from 'typescript';
import { type Finding, type Measure, byPlace } from './measure.ts';
import { type Sources, forEachNode, lineCount, lineOf, lineSpan } from './sources.ts';

export const FILE_LIMIT = 400;
export const FUNCTION_LIMITS = [60, 80] as const;

export function longFiles(sources: Sources): Measure {
  const findings: Finding[] = sources.files
    .filter((f) => f.area === 'src')
    .map((f) => ({ file: f.path, what: `${lineCount(f.text)} lines`, lines: lineCount(f.text) }))
    .filter((f) => f.lines > FILE_LIMIT)
    .sort((a, b) => b.lines - a.lines || byPlace(a, b));
  return { id: 'files-over-400', title: `Source files over ${FILE_LIMIT} lines`, count: findings.length, findings };
}

type FunctionNode =
  | ts.FunctionDeclaration
  | ts.MethodDeclaration
  | ts.ConstructorDeclaration
  | ts.GetAccessorDeclaration
  | ts.SetAccessorDeclaration
  | ts.FunctionExpression
  | ts.ArrowFunction;

function isFunctionWithBody(node: ts.Node): node is FunctionNode {
  return (
    (ts.isFunctionDeclaration(node) ||
      ts.isMethodDeclaration(node) ||
      ts.isConstructorDeclaration(node) ||
      ts.isGetAccessorDeclaration(node) ||
      ts.isSetAccessorDeclaration(node) ||
      ts.isFunctionExpression(node) ||
      ts.isArrowFunction(node)) &&
    node.body !== undefined
  );
}

function nameText(name: ts.PropertyName | ts.BindingName | undefined): string | undefined {
  if (name === undefined) return undefined;
  if (ts.isIdentifier(name) || ts.isPrivateIdentifier(name) || ts.isStringLiteral(name) || ts.isNumericLiteral(name)) {
    return name.text;
  }
  return undefined;
}

/** `Class.` for a member of a named class, '' otherwise. */
function ownerPrefix(node: ts.Node): string {
  const owner = node.parent;
  return owner && ts.isClassLike(owner) && owner.name ? `${owner.name.text}.` : '';
}

/** A name a reader can find the function by: its own, its variable's, or the call it is passed to. */
export function functionName(node: FunctionNode): string {
  if (ts.isConstructorDeclaration(node)) return `${ownerPrefix(node)}constructor`;
  if (!ts.isArrowFunction(node) && node.name) return `${ownerPrefix(node)}${nameText(node.name) ?? '[computed]'}`;
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent))
    return nameText(parent.name) ?? '(anonymous)';
  if (ts.isPropertyDeclaration(parent)) return `${ownerPrefix(parent)}${nameText(parent.name) ?? '[computed]'}`;
  if (ts.isNewExpression(parent) && ts.isIdentifier(parent.expression)) {
    return `callback of new ${parent.expression.text}(…)`;
  }
  if (ts.isCallExpression(parent)) {
    const callee = parent.expression;
    const called = ts.isPropertyAccessExpression(callee)
      ? `.${callee.name.text}`
      : ts.isIdentifier(callee)
        ? callee.text
        : 'a call';
    return `callback of ${called}(…)`;
  }
  return '(anonymous)';
}

/** Every function, method, accessor and arrow in src/ over the lower limit, longest first. */
export function longFunctions(sources: Sources): Measure[] {
  const [lower, upper] = FUNCTION_LIMITS;
  const all: Finding[] = [];
  for (const file of sources.files) {
    if (file.area !== 'src') continue;
    forEachNode(file.ast, (node) => {
      if (!isFunctionWithBody(node)) return;
      const lines = lineSpan(node);
      if (lines > lower) all.push({ file: file.path, line: lineOf(node), what: functionName(node), lines });
    });
  }
  all.sort((a, b) => (b.lines ?? 0) - (a.lines ?? 0) || byPlace(a, b));
  const over = all.filter((f) => (f.lines ?? 0) > upper);
  return [
    { id: `functions-over-${lower}`, title: `Functions over ${lower} lines`, count: all.length, findings: all },
    {
      id: `functions-over-${upper}`,
      title: `Functions over ${upper} lines`,
      count: over.length,
      findings: over,
      listedWith: `functions-over-${lower}`,
    },
  ];
}
