/**
 * What the fleet tests say when HAProxy cannot start. Starting the fleet is heavy, so the start is
 * tried alone, on the shipped config, with a PATH that lacks HAProxy or holds one that fails.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startHaproxy } from './support/haproxy.js';

/** As many backends as deploy/haproxy.cfg has servers; nothing listens on them. */
const BACKENDS = [1, 2, 3].map((n) => ({ port: 40_000 + n, adminPort: 41_000 + n }));

const bin = mkdtempSync(join(tmpdir(), 'fleet-haproxy-bin-'));
afterAll(() => rmSync(bin, { recursive: true, force: true }));

describe('starting HAProxy for the fleet tests', () => {
  it('says that haproxy is missing and how to install it, when it is not on the PATH', async () => {
    await expect(startHaproxy(BACKENDS, { PATH: bin })).rejects.toThrow(
      /^haproxy is not installed \(no haproxy on the PATH\): the fleet tests run the shipped deploy\/haproxy\.cfg in a real HAProxy\. Install it \(Debian and Ubuntu: apt-get install haproxy; \.ci\/run installs it when missing\)/,
    );
  });

  it('says how an haproxy that exits silently ended, and that it printed nothing', async () => {
    writeFileSync(join(bin, 'haproxy'), '#!/bin/sh\nexit 3\n');
    chmodSync(join(bin, 'haproxy'), 0o755);
    await expect(startHaproxy(BACKENDS, { PATH: bin })).rejects.toThrow(
      'haproxy exited before it listened (code 3, signal null). Its output:\n(no output)',
    );
  });
});
