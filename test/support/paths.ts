/**
 * Where things are, for tests that run from their TypeScript sources (`node --test test/`):
 * the repository root, and the built bundle the end-to-end suites run (what ships, built by `npm test`).
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (this file is test/support/paths.ts). */
export const REPO = fileURLToPath(new URL('../../', import.meta.url));
/** The bundle `agents` runs (package.json `bin`), built by `npm run build`. */
export const BUNDLE = join(REPO, 'dist/src/bundle/agents.js');
/** A path inside the repository. */
export const repoPath = (...parts: string[]): string => join(REPO, ...parts);
