/** Checks a matrix.json value against `schema/matrix.schema.json` (JSON Schema 2020-12, ajv). */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';

const MATRIX_SCHEMA_PATH = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'schema', 'matrix.schema.json');

let compiled: ValidateFunction | undefined;

export function matrixSchema(): Record<string, unknown> {
  return JSON.parse(readFileSync(MATRIX_SCHEMA_PATH, 'utf8')) as Record<string, unknown>;
}

/** Every problem, one per line (`/cells/3: must have required property 'reason'`); empty when valid. */
export function matrixProblems(value: unknown): string[] {
  compiled ??= new Ajv2020({ allErrors: true, strict: true, strictRequired: false }).compile(matrixSchema());
  if (compiled(value)) return [];
  return (compiled.errors ?? []).map(
    (error) =>
      `${error.instancePath || '/'}: ${error.message ?? 'is invalid'}${error.params && 'allowedValues' in error.params ? ` (${JSON.stringify(error.params.allowedValues)})` : ''}`,
  );
}

export function assertValidMatrix(value: unknown): void {
  const problems = matrixProblems(value);
  if (problems.length) throw new Error(`matrix.json does not match schema/matrix.schema.json:\n${problems.join('\n')}`);
}
