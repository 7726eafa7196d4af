/**
 * The daemon's command line, parsed: each sandbox flag becomes the IsolateExecutor option it
 * names, and a value outside what the option takes is refused naming the flag.
 */
import { describe, expect, it } from 'vitest';
import { defaultMaxWorkers } from '../../src/isolate/index.js';
import { parseCommandLine, USAGE } from '../../src/server/cli-args.js';
import { formatFlagNotInteger, formatMinWorkersAboveMax } from '../../src/server/texts.js';

function executorOf(...flags: string[]) {
  const parsed = parseCommandLine(['serve', ...flags], {});
  if (parsed.command !== 'serve') throw new Error('expected serve');
  return parsed.executor;
}

function refusal(...flags: string[]): string {
  try {
    parseCommandLine(['serve', ...flags], {});
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error(`${flags.join(' ')} was accepted`);
}

describe('the pool flags', () => {
  it('set the elastic pool options and the CPU-time bound', () => {
    const executor = executorOf(
      ...['--max-workers', '40', '--min-workers', '2', '--spare', '3', '--idle-timeout-ms', '500'],
      ...['--max-starting', '1', '--max-queue', '9000', '--cpu-timeout', '250'],
    );
    expect(executor.pool).toEqual({
      maxWorkers: 40,
      minWorkers: 2,
      spare: 3,
      idleTimeoutMs: 500,
      maxStarting: 1,
      maxQueue: 9000,
    });
    expect(executor.cpuTimeout).toBe(250);
  });

  it('leave every option unset when not given, so the executor keeps its defaults', () => {
    const executor = executorOf();
    expect(executor.pool).toEqual({});
    expect('cpuTimeout' in executor).toBe(false);
  });

  it('refuse --min-workers above --max-workers, or above the default, naming the flags', () => {
    expect(refusal('--min-workers', '5', '--max-workers', '2')).toBe(formatMinWorkersAboveMax(5, 2, true));
    const tooMany = defaultMaxWorkers() + 1;
    expect(refusal('--min-workers', String(tooMany))).toBe(formatMinWorkersAboveMax(tooMany, tooMany - 1, false));
    expect(refusal('--cpu-timeout', '0')).toBe(formatFlagNotInteger('cpu-timeout', 1, '0'));
    expect(refusal('--max-starting', '0')).toBe(formatFlagNotInteger('max-starting', 1, '0'));
  });

  it('are in --help with the defaults IsolateExecutor exports', () => {
    expect(USAGE).toContain(`sized by the host's memory, ${defaultMaxWorkers()} here`);
    for (const flag of ['--min-workers', '--idle-timeout-ms', '--max-starting', '--cpu-timeout'])
      expect(USAGE).toContain(`  ${flag} `);
  });
});
