/**
 * `npm run case -- cases/x.yaml [id] [--sides ours,latest,...]`: runs one file, or one case of it,
 * on every side asked for (default: ours), prints each side's outcome and the diff, and exits
 * non-zero when any side misses its expectation.
 */
import { resolve } from 'node:path';
import { messageOf } from '../../src/protocol/errors.js';
import { SIDE_NAMES, type SideName } from '../case-model.js';
import { brief, judge } from '../expect.js';
import { caseTitle, loadCaseFile } from '../load-cases.js';
import { type Side, skipReason, startSide } from '../sides/index.js';

const USAGE = 'usage: npm run case -- <cases/file.yaml> [case-id] [--sides ours,latest,0.4.4,0.3.8,0.2.2]';

interface Arguments {
  file: string;
  id: string | undefined;
  sides: SideName[];
}

function parseArguments(argv: readonly string[]): Arguments {
  const positional: string[] = [];
  let sides: SideName[] = ['ours'];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--sides') {
      const list = argv[++i];
      if (!list) throw new Error(`--sides needs a comma-separated list\n${USAGE}`);
      sides = list.split(',').map((name) => {
        if (!(SIDE_NAMES as readonly string[]).includes(name))
          throw new Error(`Unknown side "${name}"; known: ${SIDE_NAMES.join(', ')}`);
        return name as SideName;
      });
    } else if (arg.startsWith('--')) throw new Error(`Unknown option ${arg}\n${USAGE}`);
    else positional.push(arg);
  }
  const [file, id, ...extra] = positional;
  if (!file || extra.length > 0) throw new Error(USAGE);
  return { file, id, sides };
}

async function main(): Promise<number> {
  const args = parseArguments(process.argv.slice(2));
  const all = loadCaseFile(resolve(args.file));
  const selected = args.id === undefined ? all : all.filter((item) => item.id === args.id);
  if (selected.length === 0)
    throw new Error(`${args.file} has no case "${args.id}"; its ids: ${all.map((item) => item.id).join(', ')}`);

  const started: Side[] = [];
  let failures = 0;
  try {
    for (const name of args.sides) started.push(await startSide(name));
    for (const item of selected) {
      console.log(`\n${caseTitle(item)}  (${item.file}:${item.line})`);
      for (const side of started) {
        const skip = skipReason(item, side.name);
        if (skip !== null) {
          console.log(`  ${side.name}: skipped — ${skip}`);
          continue;
        }
        const outcome = await side.run(item);
        const verdict = judge(item, side.name, outcome);
        console.log(`  ${side.name}: ${brief(outcome)}`);
        if (verdict === null) console.log(`  ${side.name}: pass`);
        else {
          failures += 1;
          // Set as soon as it is known, so no later failure (a stop that never settles) can hide it.
          process.exitCode = 1;
          console.log(
            verdict
              .split('\n')
              .map((line) => `  ${line}`)
              .join('\n'),
          );
        }
      }
    }
    console.log(
      `\n${selected.length} case(s) on ${args.sides.join(', ')}: ${failures === 0 ? 'all pass' : `${failures} mismatch(es)`}`,
    );
  } finally {
    for (const side of started) await side.dispose();
  }
  return failures === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(messageOf(error));
    process.exit(2);
  },
);
