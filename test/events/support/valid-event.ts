/** Holds a run event to schema/run-events.schema.json (JSON Schema 2020-12, ajv, strict). */
import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { expect } from 'vitest';
import type { RunEvent } from '../../../src/protocol/types.js';

const schema = JSON.parse(readFileSync(new URL('../../../schema/run-events.schema.json', import.meta.url), 'utf8'));
const validate = new Ajv2020({ allErrors: true, strict: true, strictRequired: false }).compile(schema);

export function expectValidEvents(events: readonly RunEvent[]): void {
  for (const event of events) {
    const valid = validate(JSON.parse(JSON.stringify(event)));
    expect(validate.errors ?? [], `schema errors of ${JSON.stringify(event)}`).toEqual([]);
    expect(valid).toBe(true);
  }
}
