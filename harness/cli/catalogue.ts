/**
 * Regenerates `reports/catalogue.md` from `cases/`: `npx tsx harness/cli/catalogue.ts`.
 * With `--check`, writes nothing and exits 1 when the committed file is out of step.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, relative } from 'node:path';
import { messageOf } from '../../src/protocol/errors.js';
import { loadCatalogue } from '../load-cases.js';
import { CATALOGUE_PATH, REPO_ROOT } from '../report/paths.js';
import { texts } from '../report/texts.js';
import { renderCatalogue } from '../report/write-catalogue.js';

function committed(): string | undefined {
  try {
    return readFileSync(CATALOGUE_PATH, 'utf8');
  } catch {
    return undefined;
  }
}

try {
  const rendered = renderCatalogue(loadCatalogue(), REPO_ROOT);
  const where = relative(process.cwd(), CATALOGUE_PATH) || CATALOGUE_PATH;
  if (process.argv.includes('--check')) {
    if (committed() !== rendered) {
      console.error(texts.catalogueOutOfStep);
      process.exitCode = 1;
    } else console.log(`${where} is in step with cases/`);
  } else {
    mkdirSync(dirname(CATALOGUE_PATH), { recursive: true });
    writeFileSync(CATALOGUE_PATH, rendered);
    console.log(`wrote ${where}`);
  }
} catch (error) {
  console.error(messageOf(error));
  process.exitCode = 1;
}
