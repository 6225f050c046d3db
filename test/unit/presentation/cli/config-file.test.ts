import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  loadConfig,
  readConfigDocument,
  setConfigValue,
  unsetConfigValue,
  writeConfigDocument,
} from '../../../../src/presentation/cli/config-file.ts';

describe('config.yaml', () => {
  let dir: string;
  let path: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'ca-config-'));
    path = join(dir, 'config.yaml');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('reads defaultActor and defaultProject beside the other keys', () => {
    writeFileSync(path, 'format: plain\ndefaultActor: local/ollama\ndefaultProject: local/app\n');
    assert.deepEqual(loadConfig(path), { format: 'plain', defaultActor: 'local/ollama', defaultProject: 'local/app' });
  });

  it('a missing file is an empty config', () => {
    assert.deepEqual(loadConfig(path), {});
  });

  it('names the file, the line, the valid keys and the close key for an unknown key', () => {
    writeFileSync(path, '# mine\nformat: plain\ndefaultActr: local/x\n');
    assert.throws(
      () => loadConfig(path),
      (err: Error) => {
        assert.equal(
          err.message,
          `${path}:3: unknown key "defaultActr" (did you mean "defaultActor"?); valid keys: server, token, namespace, format, defaultActor, defaultProject`,
        );
        return true;
      },
    );
  });

  it('gives no "did you mean" for a key like none of them', () => {
    writeFileSync(path, 'colour: red\n');
    assert.throws(() => loadConfig(path), {
      message: `${path}:1: unknown key "colour"; valid keys: server, token, namespace, format, defaultActor, defaultProject`,
    });
  });

  it('names file:line:col for a YAML syntax error', () => {
    writeFileSync(path, 'format: plain\nserver: x: y\n');
    assert.throws(() => loadConfig(path), {
      message: `${path}:2:9: not valid YAML: Nested mappings are not allowed in compact mappings`,
    });
  });

  it('names file:line for a value of the wrong type or out of its choices', () => {
    writeFileSync(path, 'server: http://h\ndefaultActor: [a, b]\n');
    assert.throws(() => loadConfig(path), { message: `${path}:2: defaultActor: must be a string` });
    writeFileSync(path, '\n\nformat: fancy\n');
    assert.throws(() => loadConfig(path), { message: `${path}:3: format: must be one of rich, json, yaml, plain` });
  });

  it('set and unset keep comments and the order of the other keys', () => {
    const before = '# my settings\nformat: plain # for scripts\n\n# the server\nserver: http://h:1\n';
    writeFileSync(path, before);
    const cfg = readConfigDocument(path);
    setConfigValue(cfg, 'defaultActor', 'local/ollama');
    setConfigValue(cfg, 'format', 'json');
    writeConfigDocument(cfg);
    assert.equal(
      readFileSync(path, 'utf8'),
      '# my settings\nformat: json # for scripts\n\n# the server\nserver: http://h:1\ndefaultActor: local/ollama\n',
    );
    const again = readConfigDocument(path);
    assert.equal(unsetConfigValue(again, 'server'), true);
    assert.equal(unsetConfigValue(again, 'token'), false);
    writeConfigDocument(again);
    assert.equal(readFileSync(path, 'utf8'), '# my settings\nformat: json # for scripts\ndefaultActor: local/ollama\n');
  });

  it('set creates the file, and refuses an unknown key or a bad value with the same message', () => {
    const cfg = readConfigDocument(path);
    assert.throws(() => setConfigValue(cfg, 'defaultProjct', 'x'), {
      message: `${path}: unknown key "defaultProjct" (did you mean "defaultProject"?); valid keys: server, token, namespace, format, defaultActor, defaultProject`,
    });
    assert.throws(() => setConfigValue(cfg, 'format', 'fancy'), {
      message: `${path}: format: must be one of rich, json, yaml, plain`,
    });
    setConfigValue(cfg, 'defaultProject', 'local/app');
    writeConfigDocument(cfg);
    assert.equal(readFileSync(path, 'utf8'), 'defaultProject: local/app\n');
  });
});
