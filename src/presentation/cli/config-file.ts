/**
 * `config.yaml` as a YAML Document: read with every key's position (so a wrong key or value is named
 * `file:line`), and edited in place (so `agents config set` keeps the user's comments and order).
 */
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { isMap, isScalar, type Pair } from 'yaml';
import { UsageError } from './exit-codes.ts';
import { isOutputFormat, OUTPUT_FORMATS, type OutputFormat } from './render/format.ts';
import { lineOf, readYamlFile, unknownKeyMessage as unknownKeyOf, type YamlFile } from './support/yaml-file.ts';
import { messageOf } from '../../protocol/client/index.ts';

/** `config.yaml`: defaults for the client side of the CLI. */
export interface FileConfig {
  server?: string;
  token?: string;
  /** The namespace requests act in (sent as the A2A tenant). */
  namespace?: string;
  format?: OutputFormat;
  /** The actor of new sessions when `--actor` is not given (`agents init` sets it). */
  defaultActor?: string;
  /** The project of new sessions when neither `--project` nor the current directory names one. */
  defaultProject?: string;
}

export type ConfigKey = keyof FileConfig;

/** The keys, in the order they are listed in messages. */
export const CONFIG_KEYS: readonly ConfigKey[] = [
  'server',
  'token',
  'namespace',
  'format',
  'defaultActor',
  'defaultProject',
];

const isConfigKey = (k: string): k is ConfigKey => (CONFIG_KEYS as readonly string[]).includes(k);

/** Checks one value of a key; returns what is wrong with it, or undefined. */
function valueProblem(key: ConfigKey, value: unknown): string | undefined {
  if (typeof value !== 'string') return 'must be a string';
  if (key === 'format' && !isOutputFormat(value)) return `must be one of ${OUTPUT_FORMATS.join(', ')}`;
  if (value === '') return 'must not be empty (unset the key instead)';
  return undefined;
}

/** `unknown key "x"; valid keys: …`, with "did you mean" when a key is close. */
export function unknownKeyMessage(key: string): string {
  return unknownKeyOf(key, CONFIG_KEYS);
}

/** The config file, parsed: its Document (for editing) and where each offset is (for `file:line`). */
export type ConfigDocument = YamlFile;

/** Reads and parses the file; a missing file is an empty document, a YAML error names `file:line:col`. */
export function readConfigDocument(path: string): ConfigDocument {
  return readYamlFile(path, {
    missingIsEmpty: true,
    what: 'the config file',
    syntaxHint:
      'fix it in an editor (the config commands cannot read it either), or move it away to start from the defaults',
    keys: CONFIG_KEYS,
  });
}

function pairsOf(cfg: ConfigDocument): Array<Pair<unknown, unknown>> {
  return isMap(cfg.doc.contents) ? cfg.doc.contents.items : [];
}

/** The config's values, checked: an unknown key or a wrong value is an error naming `file:line`. */
export function configValues(cfg: ConfigDocument): FileConfig {
  const out: FileConfig = {};
  for (const pair of pairsOf(cfg)) {
    const keyNode = isScalar(pair.key) ? pair.key : undefined;
    const key = String(keyNode?.value ?? pair.key);
    const line = lineOf(cfg, keyNode);
    if (!isConfigKey(key)) throw new UsageError(`${cfg.path}:${line}: ${unknownKeyMessage(key)}`);
    const value = isScalar(pair.value) ? pair.value.value : pair.value;
    if (value === null || value === undefined) continue;
    const problem = valueProblem(key, value);
    if (problem) throw new UsageError(`${cfg.path}:${line}: ${key}: ${problem}`);
    (out as Record<string, unknown>)[key] = value;
  }
  return out;
}

/** Reads the config file; a missing file is an empty config, a broken one a usage error naming `file:line`. */
export function loadConfig(path: string): FileConfig {
  return configValues(readConfigDocument(path));
}

/** Checks a key and its value as `config set` would store them; the message matches a bad file's. */
export function checkSetting(path: string, key: string, value: unknown): ConfigKey {
  if (!isConfigKey(key)) throw new UsageError(`${path}: ${unknownKeyMessage(key)}`);
  const problem = valueProblem(key, value);
  if (problem) throw new UsageError(`${path}: ${key}: ${problem}`);
  return key;
}

/** Sets a key in the document (in place: comments and the other keys' order stay). */
export function setConfigValue(cfg: ConfigDocument, key: string, value: string): void {
  const k = checkSetting(cfg.path, key, value);
  // Everything else in the file must be valid too: writing would otherwise keep a broken file broken.
  configValues(cfg);
  if (cfg.doc.contents === null) cfg.doc.contents = cfg.doc.createNode({});
  cfg.doc.set(k, value);
}

/** Removes a key; returns whether it was there. */
export function unsetConfigValue(cfg: ConfigDocument, key: string): boolean {
  if (!isConfigKey(key)) throw new UsageError(`${cfg.path}: ${unknownKeyMessage(key)}`);
  configValues(cfg);
  return cfg.doc.delete(key);
}

/** Writes the document back (through a temporary file, so a crash leaves the old file whole). */
export function writeConfigDocument(cfg: ConfigDocument): void {
  try {
    mkdirSync(dirname(cfg.path), { recursive: true });
    const tmp = `${cfg.path}.${process.pid}.tmp`;
    // The file may hold a token: readable by its owner only.
    writeFileSync(tmp, cfg.doc.toString(), { mode: 0o600 });
    renameSync(tmp, cfg.path);
  } catch (err) {
    throw new UsageError(`cannot write the config file ${cfg.path}: ${messageOf(err)}`);
  }
}
