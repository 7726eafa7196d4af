/** Holds a run record to schema/run-record.schema.json (JSON Schema 2020-12, ajv, strict), as it would be stored. */
import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { expect } from 'vitest';
import type { RunRecord } from '../../../src/record/types.js';

const schema = JSON.parse(readFileSync(new URL('../../../schema/run-record.schema.json', import.meta.url), 'utf8'));
const validate = new Ajv2020({ allErrors: true, strict: true, strictRequired: false }).compile(schema);

export function expectValid(record: RunRecord): void {
  const valid = validate(JSON.parse(JSON.stringify(record)));
  expect(validate.errors ?? [], 'schema errors').toEqual([]);
  expect(valid).toBe(true);
}
