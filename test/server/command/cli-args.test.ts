/**
 * The daemon's command line, parsed: each sandbox flag becomes the IsolateExecutor option it
 * names, and a value outside what the option takes is refused naming the flag.
 */
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_LIMITS,
  DEFAULT_POOL,
  defaultMaxWorkers,
  defaultMemoryBudgetMb,
  LIMIT_MAXIMA,
} from '../../../src/isolate/index.js';
import { parseCommandLine, USAGE } from '../../../src/server/command/cli-args.js';
import {
  formatCgroupNotAbsolute,
  formatConfinementInvalid,
  formatMinWorkersAboveMax,
} from '../../../src/server/texts.js';

/** --help's words with its wrapping undone: a flag's text wraps wherever its line runs out. */
const HELP_WORDS = USAGE.replace(/\s+/g, ' ');

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
    expect(refusal('--cpu-timeout', '0')).toBe('--cpu-timeout must be at least 1, got 0');
    expect(refusal('--max-starting', '0')).toBe('--max-starting must be at least 1, got 0');
  });

  it('are in --help with the defaults IsolateExecutor exports', () => {
    expect(HELP_WORDS).toContain(`within the open-file limit; ${defaultMaxWorkers()} here`);
    expect(HELP_WORDS).toContain(`else the machine's); ${defaultMemoryBudgetMb()} here`);
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
    expect(refusal('--memory-limit-mb', '8')).toBe('--memory-limit-mb must be at least 64, got 8');
    expect(refusal('--cgroup', 'codemode.slice')).toBe(formatCgroupNotAbsolute('codemode.slice'));
    expect(refusal('--confinement', 'strict')).toBe(formatConfinementInvalid('strict', ['auto', 'required', 'off']));
    const over = LIMIT_MAXIMA.maxResultBytes + 1;
    expect(refusal('--max-result-bytes', String(over))).toBe(
      `--max-result-bytes must be from 1 to ${LIMIT_MAXIMA.maxResultBytes}, got ${over}`,
    );
    expect(refusal('--max-log-lines', '0')).toBe(
      `--max-log-lines must be from 1 to ${LIMIT_MAXIMA.maxLogLines}, got 0`,
    );
  });

  it('show the defaults IsolateExecutor exports in --help', () => {
    expect(HELP_WORDS).toContain(`memory together (default ${DEFAULT_POOL.memoryLimitMb})`);
    expect(USAGE).toContain(
      `--max-result-bytes <bytes>             the result, encoded (default ${DEFAULT_LIMITS.maxResultBytes})`,
    );
    expect(USAGE).toContain('--confinement <auto|required|off>');
  });
});

describe('a value out of range, and --version', () => {
  it('says a negative value is out of range, with the range, rather than that the flag has no value', () => {
    expect(refusal('--port', '-1')).toBe('--port must be from 0 to 65535, got -1');
    expect(refusal('--port', '70000')).toBe('--port must be from 0 to 65535, got 70000');
    expect(refusal('--admin-port', '-8080')).toBe('--admin-port must be from 0 to 65535, got -8080');
    // The timeout rule, a request's own, takes 0 (src/protocol/request-schema.ts).
    expect(refusal('--timeout', '-5')).toBe('--timeout must be at least 0, got -5');
    expect(refusal('--max-workers', '-1')).toBe('--max-workers must be at least 1, got -1');
  });

  it('still says a flag has no value when none follows it, and names a malformed one', () => {
    expect(refusal('--port')).toBe('--port needs a value');
    expect(refusal('--port', '--detached')).toBe('--port needs a value');
    expect(refusal('--port', '-1.5')).toBe('--port must be an integer >= 0, got "-1.5"');
  });

  it('reads --version, with or without the command', () => {
    expect(parseCommandLine(['--version'], {})).toEqual({ command: 'version' });
    expect(parseCommandLine(['serve', '-V'], {})).toEqual({ command: 'version' });
    expect(USAGE).toContain('  -V, --version ');
  });
});
