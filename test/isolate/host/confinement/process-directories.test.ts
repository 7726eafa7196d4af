import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeProcessDirectory } from '../../../../src/isolate/host/confinement/process-directories.js';

/** A pid no process has: above the kernel's pid_max ceiling (2^22). */
const GONE_PID = 4_194_305;

describe('makeProcessDirectory', () => {
  let base: string;
  afterEach(() => rmSync(base, { recursive: true, force: true }));

  it("removes the directories a gone process left under the prefix, and keeps a live process's and other names", () => {
    base = mkdtempSync(join(tmpdir(), 'process-directories-test-'));
    for (const name of [`state-${GONE_PID}-abc`, `state-${process.ppid}-def`, `other-${GONE_PID}-ghi`, 'state-x'])
      mkdirSync(join(base, name));
    const made = makeProcessDirectory(base, 'state-');
    expect(made.startsWith(join(base, `state-${process.pid}-`))).toBe(true);
    expect(readdirSync(base).sort()).toEqual(
      [`other-${GONE_PID}-ghi`, `state-${process.ppid}-def`, made.slice(base.length + 1), 'state-x'].sort(),
    );
  });
});
