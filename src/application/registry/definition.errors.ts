import { AppError, type FieldViolation } from '../../domain/errors.ts';

/** One error carrying every problem of a definition, each with its file and line. */
export function definitionError(filename: string, problems: FieldViolation[], hint?: string): AppError {
  const lines = problems.map(
    (p) => `  ${p.file ?? filename}${p.line ? `:${p.line}` : ''}: ${p.field}: ${p.description}`,
  );
  const n = problems.length;
  return new AppError('INVALID_PARAMS', `${filename} has ${n} problem${n === 1 ? '' : 's'}:\n${lines.join('\n')}`, {
    fields: problems,
    hint,
  });
}
