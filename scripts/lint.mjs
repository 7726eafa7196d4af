// `npm run lint`: the three checks in order, stopping at the first that fails. They are npm scripts
// of their own (lint:biome, lint:knip, lint:imports), so each runs alone, and knip sees the
// binaries they name. A script here, not an `&&` chain, so that --help answers at once: npm hands
// a chain's arguments to its last command, after the others have run in full.
import { spawnSync } from 'node:child_process';

const STEPS = [
  ['lint:biome', "Biome's formatter and lint rules (npm run format fixes what it can)"],
  ['lint:knip', 'knip: unused files, exports and dependencies'],
  ['lint:imports', 'dependency-cruiser: the import rules of .dependency-cruiser.mjs'],
];

const USAGE = `usage: npm run lint

Runs, in order, stopping at the first that fails:
${STEPS.map(([script, what]) => `  npm run ${script.padEnd(14)} ${what}`).join('\n')}

  -h, --help   print this text`;

const args = process.argv.slice(2);
if (args.some((arg) => arg === '--help' || arg === '-h')) {
  console.log(USAGE);
  process.exit(0);
}
if (args.length > 0) {
  console.error(`lint: unexpected argument ${args[0]}\n\n${USAGE}`);
  process.exit(2);
}
for (const [script] of STEPS) {
  const { status, signal } = spawnSync('npm', ['run', '--silent', script], { stdio: 'inherit' });
  if (status !== 0) process.exit(status ?? (signal ? 1 : 0));
}
