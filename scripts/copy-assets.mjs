// Copies the non-TypeScript files under src/ (worker scripts, capnp templates) into dist/,
// so a module finds its assets beside itself whether it runs from src/ or from dist/. A wing's
// tsconfig.json is for checking the source, not an asset.
import { cpSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const src = join(root, 'src');
const dist = join(root, 'dist');

function walk(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path);
    else if (!name.endsWith('.ts') && name !== 'tsconfig.json') {
      const target = join(dist, relative(src, path));
      mkdirSync(dirname(target), { recursive: true });
      cpSync(path, target);
    }
  }
}
walk(src);
