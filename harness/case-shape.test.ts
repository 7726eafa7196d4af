/**
 * The schemas and the harness's models say the same thing: `schema/case.schema.json` against
 * `Case` and `Flow`, `schema/boundaries.schema.json` against `Boundary`, compared property by
 * property (names, which are optional, closed sets of values). A field added to one side only fails
 * here, naming the path.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { schemaShape, typeShape } from './test-support/shapes.js';

const ROOT = join(import.meta.dirname, '..');
const MODELS = [join(ROOT, 'harness', 'case-model.ts'), join(ROOT, 'harness', 'flow-model.ts')];
const schema = (name: string) =>
  JSON.parse(readFileSync(join(ROOT, 'schema', name), 'utf8')) as Record<string, unknown>;

/** The boundaries schema's item, as a definition the walk can start from. */
const boundariesSchema = () => ({ $defs: { boundary: schema('boundaries.schema.json').items } });

/** Where the model is wider than the schema on purpose: the loader holds the schema's list. */
const widenedInTheModel = (lines: string[]) => lines.filter((line) => !/^\w+\.features\[\] = /.test(line));

describe('the case model and the schemas', () => {
  it.each([
    ['case', 'Case'],
    ['flow', 'Flow'],
  ])('$defs/%s in case.schema.json has exactly the fields of %s', (definition, type) => {
    expect(typeShape(MODELS, type, definition)).toEqual(
      widenedInTheModel(schemaShape(schema('case.schema.json'), definition)),
    );
  });

  it('boundaries.schema.json has exactly the fields of Boundary', () => {
    expect(typeShape(MODELS, 'Boundary', 'boundary')).toEqual(schemaShape(boundariesSchema(), 'boundary'));
  });

  it('the comparison sees a field, its optionality, a value and a union branch', () => {
    const dir = mkdtempSync(join(tmpdir(), 'case-shape-'));
    try {
      const file = join(dir, 'model.ts');
      writeFileSync(
        file,
        "export interface Item { id: string; as?: 'a' | 'b'; tools: Record<string, Tool>; steps: Array<{ go: true } | { stop: number; next?: Tool }> }\ntype Tool = { echo: true } | { delay: number; next?: Tool };\n",
      );
      const def = {
        $defs: {
          item: {
            type: 'object',
            required: ['id', 'tools', 'steps'],
            properties: {
              id: { type: 'string' },
              as: { enum: ['a', 'b'] },
              tools: { type: 'object', additionalProperties: { $ref: '#/$defs/tool' } },
              steps: {
                type: 'array',
                items: {
                  oneOf: [
                    { type: 'object', required: ['go'], properties: { go: { const: true } } },
                    { type: 'object', required: ['stop'], properties: { stop: {}, next: { $ref: '#/$defs/tool' } } },
                  ],
                },
              },
            },
          },
          tool: {
            type: 'object',
            properties: { echo: { const: true }, delay: {}, next: { $ref: '#/$defs/tool' } },
            oneOf: [{ required: ['echo'] }, { required: ['delay'] }],
          },
        },
      };
      const expected = [
        'item.as?',
        'item.as? = "a" | "b"',
        'item.id',
        'item.steps',
        'item.steps[] one of {go} {stop}',
        'item.steps[].go?',
        'item.steps[].go? = true',
        'item.steps[].stop?',
        'item.steps[].next?',
        'item.steps[].next? one of {delay} {echo}',
        'item.steps[].next?.delay?',
        'item.steps[].next?.echo?',
        'item.steps[].next?.echo? = true',
        'item.steps[].next?.next?',
        'item.tools',
        'item.tools{} one of {delay} {echo}',
        'item.tools{}.delay?',
        'item.tools{}.echo?',
        'item.tools{}.echo? = true',
        'item.tools{}.next?',
      ].sort();
      expect(typeShape([file], 'Item', 'item')).toEqual(expected);
      expect(schemaShape(def, 'item')).toEqual(expected);
      // One change per kind: a field made optional, a value dropped, a branch's field made optional.
      def.$defs.item.required = ['id', 'tools'];
      def.$defs.item.properties.as = { enum: ['a'] };
      def.$defs.item.properties.steps.items.oneOf[1]!.required = [];
      const changed = schemaShape(def, 'item');
      expect(changed.filter((line) => !expected.includes(line))).toEqual(
        [
          'item.as? = "a"',
          'item.steps?',
          'item.steps?[] one of {go} {}',
          'item.steps?[].go?',
          'item.steps?[].go? = true',
          'item.steps?[].stop?',
          'item.steps?[].next?',
          'item.steps?[].next? one of {delay} {echo}',
          'item.steps?[].next?.delay?',
          'item.steps?[].next?.echo?',
          'item.steps?[].next?.echo? = true',
          'item.steps?[].next?.next?',
        ].sort(),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
