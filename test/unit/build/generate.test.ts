import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { z } from 'zod';
import { renderCli } from '../../../build/generate/cli-doc.ts';
import { anchorOf, renderMethods } from '../../../build/generate/methods-doc.ts';
import { shapeOf, typeOf } from '../../../build/generate/schema-fields.ts';
import { defineContract, defineStreamContract } from '../../../src/protocol/a2a/contract.ts';

const widgetShow = defineContract({
  name: '_test/widget/show',
  surface: 'extension',
  since: '1.4',
  summary: 'Show one widget.',
  permission: 'registry:read',
  scope: { param: 'name', form: 'entity' },
  params: z.object({ name: z.string().describe('the widget | its name'), depth: z.number().int().optional() }).strict(),
  result: z.object({ name: z.string(), tags: z.array(z.enum(['a', 'b'])) }),
});
const widgetWatch = defineStreamContract({
  name: 'WatchWidget',
  aliases: ['widget/watch'],
  surface: 'a2a',
  summary: 'Follow a widget.',
  permission: 'task:read',
  params: z.object({}).strict(),
  result: z.union([z.object({ changed: z.string() }), z.object({ gone: z.literal(true) })]),
});

describe('generated reference: schema fields', () => {
  it('writes a JSON Schema as a short type', () => {
    assert.equal(typeOf({ enum: ['x', 'y'] }), '"x" | "y"');
    assert.equal(typeOf({ type: 'array', items: { type: 'integer' } }), 'array of integer');
    assert.equal(typeOf({ type: 'object', properties: { a: {}, b: {} } }), 'object {a, b}');
    assert.equal(typeOf({ type: 'object', additionalProperties: {} }), 'map');
    assert.equal(typeOf({ anyOf: [{ type: 'string' }, { type: 'null' }] }), 'string | null');
    assert.equal(typeOf({}), 'any');
  });
  it("reads an object's fields with required and description, and a union's cases", () => {
    assert.deepEqual(shapeOf(widgetShow.params, 'input'), {
      cases: [
        [
          { name: 'name', type: 'string', required: true, description: 'the widget | its name' },
          { name: 'depth', type: 'integer', required: false, description: '' },
        ],
      ],
    });
    assert.deepEqual(
      shapeOf(widgetWatch.result, 'output').cases.map((c) => c.map((f) => f.name)),
      [['changed'], ['gone']],
    );
    assert.deepEqual(shapeOf(z.string(), 'output'), { cases: [], type: 'string' });
  });
});

describe('generated reference: methods.md and cli.md', () => {
  const doc = renderMethods({ widget: { widgetShow, widgetWatch } });
  it('gives each family a section and each method its facts and fields', () => {
    assert.match(doc, /^- \[widget\]\(#widget\) \(2\)$/m);
    assert.match(doc, /^## widget\n\n### _test\/widget\/show\n\nShow one widget\.\n/m);
    assert.match(doc, /^- surface: extension, since extension 1\.4$/m);
    assert.match(doc, /^- permission: `registry:read`, scope: the entity named by `name`$/m);
    assert.match(doc, /^\| `name` \| string \| yes \| the widget \\\| its name \|$/m);
    assert.match(doc, /^\| `tags` \| array of "a" \\\| "b" \|$/m);
    assert.match(doc, /^- surface: a2a \(streaming: the result is one event\)$/m);
    assert.match(doc, /^- also called: `widget\/watch`$/m);
    assert.match(doc, /^Event, case 2 of 2:\n\n\| field \| type \|\n\| --- \| --- \|\n\| `gone` \| true \|$/m);
    assert.ok(doc.endsWith('|\n') && !doc.includes('\n\n\n'), 'one blank line between blocks, one newline at the end');
  });
  it('lists commands sorted, each method linked to its section', () => {
    const cli = renderCli({
      commands: { 'widget watch': ['WatchWidget', '_test/widget/show'], 'a first': ['WatchWidget'] },
      serverCommands: ['serve'],
      noCommandExpected: { 'rpc.discover': 'for tools' },
    });
    const rows = cli.split('\n').filter((l) => l.startsWith('| `agents'));
    assert.deepEqual(rows, [
      '| `agents a first` | [`WatchWidget`](methods.md#watchwidget) |',
      '| `agents widget watch` | [`WatchWidget`](methods.md#watchwidget), [`_test/widget/show`](methods.md#_testwidgetshow) |',
    ]);
    assert.match(cli, /^- `agents serve`$/m);
    assert.match(cli, /^\| \[`rpc\.discover`\]\(methods\.md#rpcdiscover\) \| for tools \|$/m);
    assert.equal(anchorOf('registry: resource types'), 'registry-resource-types');
  });
});
