import { describe, expect, it } from 'vitest';
import { texts } from '../texts.js';
import { createProgress } from './progress.js';

function capture(isTTY: boolean) {
  let clock = 1_000;
  let out = '';
  const progress = createProgress({ write: (text) => (out += text), isTTY, now: () => clock, logEveryMs: 5000 });
  return { progress, out: () => out, advance: (ms: number) => (clock += ms) };
}

describe('progress', () => {
  it('in a log: prints the column, done/total and elapsed time at most every few seconds, and every failure at once', () => {
    const log = capture(false);
    log.progress.columnStart('0.3.8', 10);
    log.advance(1000);
    log.progress.step('0.3.8', 1, 10, 0); // too soon after the start line: not printed
    log.advance(5000);
    log.progress.step('0.3.8', 6, 10, 0);
    log.progress.failure(
      '0.3.8',
      'cases/args.yaml',
      'args-spread-two',
      'outcome differs from expect in result\n  outcome: {}',
    );
    log.advance(500);
    log.progress.step('0.3.8', 10, 10, 1); // the last step is always printed
    expect(log.out()).toBe(
      [
        texts.progress.columnStart('0.3.8', 10),
        '[0.3.8] 6/10 · 6.0s',
        '[0.3.8] ✗ cases/args.yaml › args-spread-two: outcome differs from expect in result',
        '[0.3.8] 10/10 · 6.5s · 1 failed',
        '',
      ].join('\n'),
    );
  });

  it('on a terminal: updates the count line in place and clears it before other output', () => {
    const tty = capture(true);
    tty.progress.columnStart('ours', 2);
    tty.progress.step('ours', 1, 2, 0);
    tty.progress.infra('ours', 'workerd exited');
    expect(tty.out()).toBe(
      `${texts.progress.columnStart('ours', 2)}\n\r\x1b[K[ours] 1/2 · 0.0s\r\x1b[K[ours] ⚠ infra-error: workerd exited\n`,
    );
  });
});
