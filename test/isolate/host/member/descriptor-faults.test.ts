/**
 * What counts as a host out of file descriptors, and what a run that met it is told: EMFILE and
 * ENFILE, each with the limit and what raises it.
 */
import { describe, expect, it } from 'vitest';
import { descriptorFaultOf } from '../../../../src/isolate/host/member/descriptor-faults.js';
import { isolateText } from '../../../../src/isolate/host/texts.js';
import { ExecutorError } from '../../../../src/protocol/errors.js';

const emfile = Object.assign(new Error('spawn /bin/sh EMFILE'), { code: 'EMFILE' });

describe('descriptorFaultOf', () => {
  it('finds EMFILE or ENFILE on the error, on one it wraps, or in a message that names it', () => {
    const wrapped = new ExecutorError('SANDBOX_UNAVAILABLE', 'could not start', { cause: emfile });
    const named = new Error("ENFILE: file table overflow, open '/tmp/x'");
    expect([emfile, wrapped, named].map(descriptorFaultOf)).toEqual(['EMFILE', 'EMFILE', 'ENFILE']);
  });

  it('finds nothing in other errors', () => {
    const other = Object.assign(new Error('spawn /bin/sh ENOENT'), { code: 'ENOENT' });
    expect([other, 'EMFILEs', undefined, new Error('TEMFILE')].map(descriptorFaultOf)).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
  });
});

describe('the text of a start that found no descriptor', () => {
  it("names EMFILE, the process's limit and ulimit -n", () => {
    expect(isolateText.descriptorsExhausted('EMFILE', 256)).toMatch(
      /\(EMFILE; its limit is 256, `ulimit -n`\)\. Raise `ulimit -n` \(LimitNOFILE= under systemd\)/,
    );
  });

  it("names ENFILE, the system's limit and the process's own", () => {
    expect(isolateText.descriptorsExhausted('ENFILE', 1024)).toMatch(
      /table of open files is full \(ENFILE; this process's own limit is 1024, `ulimit -n`\)\. Raise the system's limit \(fs\.file-max\)/,
    );
  });
});
