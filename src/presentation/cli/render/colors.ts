/** ANSI styling for rich output; every style is the identity when colour is off. */
export interface Palette {
  readonly enabled: boolean;
  bold(s: string): string;
  dim(s: string): string;
  red(s: string): string;
  green(s: string): string;
  yellow(s: string): string;
  blue(s: string): string;
  cyan(s: string): string;
  magenta(s: string): string;
}

const sgr =
  (open: number, close: number) =>
  (s: string): string =>
    `\u001b[${open}m${s}\u001b[${close}m`;

const ON: Palette = {
  enabled: true,
  bold: sgr(1, 22),
  dim: sgr(2, 22),
  red: sgr(31, 39),
  green: sgr(32, 39),
  yellow: sgr(33, 39),
  blue: sgr(34, 39),
  cyan: sgr(36, 39),
  magenta: sgr(35, 39),
};

const id = (s: string): string => s;
const OFF: Palette = {
  enabled: false,
  bold: id,
  dim: id,
  red: id,
  green: id,
  yellow: id,
  blue: id,
  cyan: id,
  magenta: id,
};

export interface ColorInputs {
  /** `--no-color` was given. */
  disabled: boolean;
  /** The stream the text goes to is a terminal. */
  isTTY: boolean;
  env: NodeJS.ProcessEnv;
}

/**
 * Colour only for a terminal, and never when `--no-color` or `NO_COLOR` (no-color.org) says so;
 * `FORCE_COLOR` (non-empty, not 0) turns it on for pipes.
 */
export function colorEnabled({ disabled, isTTY, env }: ColorInputs): boolean {
  if (disabled) return false;
  if (env['NO_COLOR'] !== undefined && env['NO_COLOR'] !== '') return false;
  const force = env['FORCE_COLOR'];
  if (force !== undefined && force !== '' && force !== '0') return true;
  return isTTY && env['TERM'] !== 'dumb';
}

export const palette = (enabled: boolean): Palette => (enabled ? ON : OFF);

// eslint-disable-next-line no-control-regex -- ANSI styles begin with the ESC control character.
const ANSI = /\u001b\[[0-9;]*m/g;

/** The width of a string as a terminal shows it (ANSI styles take no room). */
export const visibleLength = (s: string): number => s.replace(ANSI, '').length;
