/** Where the report reads and writes, from the repository root (not the working directory). */
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const REPORTS_DIR = join(REPO_ROOT, 'reports');
export const CATALOGUE_PATH = join(REPORTS_DIR, 'catalogue.md');
