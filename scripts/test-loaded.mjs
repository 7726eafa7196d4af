// `npm run test:loaded`: the suite beside CPU burners that keep every core busy, as on a shared CI
// runner. Arguments go to `npm test` (so `npm run test:loaded -- test/isolate` narrows it).
// The burners are plain busy loops at the suite's own priority; they end with this script.
import { spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';

const USAGE = `usage: npm run test:loaded [-- <vitest arguments>]

Runs npm test beside one busy loop per core, as on a shared CI runner; the arguments go to
vitest (npm run test:loaded -- test/isolate narrows it to a folder).

  CODEMODE_TEST_BURNERS=<n>   how many busy loops (default: one per core)
  -h, --help                  print this text`;

// Before any busy loop starts: vitest's own --help would answer for it otherwise.
if (process.argv.slice(2).some((arg) => arg === '--help' || arg === '-h')) {
  console.log(USAGE);
  process.exit(0);
}

const burnerCount = Number(process.env.CODEMODE_TEST_BURNERS ?? availableParallelism());
if (!Number.isInteger(burnerCount) || burnerCount < 0) {
  console.error(`CODEMODE_TEST_BURNERS must be a whole number of busy loops, not ${process.env.CODEMODE_TEST_BURNERS}`);
  process.exit(2);
}

const burners = Array.from({ length: burnerCount }, () =>
  spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }),
);
const stopBurners = () => {
  for (const burner of burners) burner.kill('SIGKILL');
};
console.log(`test:loaded: ${burnerCount} busy loop(s) beside the suite`);

const suite = spawn('npm', ['test', '--', ...process.argv.slice(2)], { stdio: 'inherit' });
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    suite.kill(signal);
    stopBurners();
  });
}
suite.on('exit', (code, signal) => {
  stopBurners();
  process.exit(code ?? (signal ? 1 : 0));
});
