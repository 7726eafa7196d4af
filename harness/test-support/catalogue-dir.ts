/** A scratch catalogue directory for the command tests (test-only): the real boundaries file, and case files given as text. */
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BOUNDARIES_FILE, SCHEMA_COMMENT } from '../load-cases.js';

export interface FixtureCatalogue {
  dir: string;
  write(name: string, body: string): string;
  remove(): void;
}

export function fixtureCatalogue(prefix: string): FixtureCatalogue {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  copyFileSync(join(import.meta.dirname, '..', '..', 'cases', BOUNDARIES_FILE), join(dir, BOUNDARIES_FILE));
  return {
    dir,
    write(name, body) {
      const file = join(dir, name);
      writeFileSync(file, `${SCHEMA_COMMENT}\n${body}`);
      return file;
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** One case as YAML text. */
export function caseText(id: string, code: string, expect: string, extra = ''): string {
  return `- id: ${id}\n  description: ${id}.\n  features: [result]\n  code: ${JSON.stringify(code)}\n  expect: ${expect}\n${extra}`;
}
