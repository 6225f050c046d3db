import { readFileSync } from 'node:fs';

/**
 * The package version, read once from package.json: two levels up from dist/src/main (or the
 * bundle's dist/src/bundle) and the package root, one from src/main when Node runs the sources.
 */
const PACKAGE_JSON = import.meta.url.endsWith('.ts') ? '../../package.json' : '../../../package.json';
export const VERSION: string = (() => {
  try {
    const pkg = JSON.parse(readFileSync(new URL(PACKAGE_JSON, import.meta.url), 'utf8')) as {
      version?: string;
    };
    return pkg.version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
})();
