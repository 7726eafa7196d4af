/**
 * The daemon's command line, parsed: each sandbox flag becomes the IsolateExecutor option it
 * names, and a value outside what the option takes is refused naming the flag.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS, DEFAULT_POOL, defaultMaxWorkers, LIMIT_MAXIMA } from '../../src/isolate/index.js';
import { parseCommandLine, USAGE } from '../../src/server/cli-args.js';
import {
  formatCgroupNotAbsolute,
  formatConfinementInvalid,
  formatFlagNotInteger,
  formatFlagOutOfRange,
  formatMinWorkersAboveMax,
} from '../../src/server/texts.js';

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
    expect(executor).toEqual({ pool: {}, limits: {} });
  });

  it('refuse --min-workers above --max-workers, or above the default, naming the flags', () => {
    expect(refusal('--min-workers', '5', '--max-workers', '2')).toBe(formatMinWorkersAboveMax(5, 2, true));
    const tooMany = defaultMaxWorkers() + 1;
    expect(refusal('--min-workers', String(tooMany))).toBe(formatMinWorkersAboveMax(tooMany, tooMany - 1, false));
    expect(refusal('--cpu-timeout', '0')).toBe(formatFlagNotInteger('cpu-timeout', 1, '0'));
    expect(refusal('--max-starting', '0')).toBe(formatFlagNotInteger('max-starting', 1, '0'));
  });

  it('are in --help with the defaults IsolateExecutor exports', () => {
    expect(USAGE).toContain(`--memory-limit-mb, ${defaultMaxWorkers()} here with the default cap`);
    for (const flag of ['--min-workers', '--idle-timeout-ms', '--max-starting', '--cpu-timeout'])
      expect(USAGE).toContain(`  ${flag} `);
  });
});

describe('the containment and confinement flags', () => {
  it('set the memory cap, the delegated cgroup, every size cap and the confinement mode', () => {
    const executor = executorOf(
      ...['--memory-limit-mb', '256', '--cgroup', '/sys/fs/cgroup/codemode.slice', '--confinement', 'off'],
      ...['--max-request-bytes', '1000', '--max-result-bytes', '2000', '--max-tool-args-bytes', '3000'],
      ...['--max-tool-result-bytes', '4000', '--max-log-lines', '5', '--max-log-bytes', '6000'],
      ...['--max-request-body-bytes', '7000', '--max-response-body-bytes', '8000'],
    );
    expect(executor).toEqual({
      pool: { memoryLimitMb: 256, cgroup: '/sys/fs/cgroup/codemode.slice' },
      limits: {
        maxRequestBytes: 1000,
        maxResultBytes: 2000,
        maxToolArgsBytes: 3000,
        maxToolResultBytes: 4000,
        maxLogLines: 5,
        maxLogBytes: 6000,
        maxRequestBodyBytes: 7000,
        maxResponseBodyBytes: 8000,
      },
      confinement: 'off',
    });
  });

  it('refuse what the options refuse, naming the flag', () => {
    expect(refusal('--memory-limit-mb', '8')).toBe(formatFlagNotInteger('memory-limit-mb', 64, '8'));
    expect(refusal('--cgroup', 'codemode.slice')).toBe(formatCgroupNotAbsolute('codemode.slice'));
    expect(refusal('--confinement', 'strict')).toBe(formatConfinementInvalid('strict', ['auto', 'required', 'off']));
    const over = LIMIT_MAXIMA.maxResultBytes + 1;
    expect(refusal('--max-result-bytes', String(over))).toBe(
      formatFlagOutOfRange('max-result-bytes', LIMIT_MAXIMA.maxResultBytes, over),
    );
    expect(refusal('--max-log-lines', '0')).toBe(formatFlagNotInteger('max-log-lines', 1, '0'));
  });

  it('show the defaults IsolateExecutor exports in --help', () => {
    expect(USAGE).toContain(`memory together (default ${DEFAULT_POOL.memoryLimitMb})`);
    expect(USAGE).toContain(
      `--max-result-bytes <bytes>             the result, encoded (default ${DEFAULT_LIMITS.maxResultBytes})`,
    );
    expect(USAGE).toContain('--confinement <auto|required|off>');
  });
});
