/**
 * The supervisor's outcome frames, run in Node: a sandbox's answer becomes its `done` message,
 * a value over `limits.maxResultBytes` becomes the text naming that cap before anything is sent,
 * and a frame over what the channel carries becomes a fault saying so, with its logs if they fit.
 */
import { describe, expect, it } from 'vitest';
import type { SupervisorMessage } from '../../../src/isolate/contract/messages.js';
import type { SupervisorSettings } from '../../../src/isolate/contract/sandbox-settings.js';
import { supervisorText } from '../../../src/isolate/contract/texts.js';
import { doneMessage, overFrameCap, report, valueCodec } from '../../../src/isolate/workerd/outcome-frames.js';
import type { RunId, SandboxWorker } from '../../../src/isolate/workerd/types.js';
import type { LogEntry } from '../../../src/protocol/types.js';

const run = 'run-1' as RunId;

/** Only the caps matter to these frames. */
function settings(caps: Partial<SupervisorSettings> = {}): SupervisorSettings {
  return {
    maxFrameBytes: 1000,
    maxOutcomeRpcBytes: 4000,
    maxResultBytes: 200,
    ...caps,
  } as SupervisorSettings;
}

/** A worker whose snapshot (asked for when its call threw) holds these lines. */
function workerWithSnapshot(logs: LogEntry[]): SandboxWorker {
  return {
    getEntrypoint: () => ({ snapshot: async () => ({ logs, settledBeforeDeadline: false }) }),
  } as unknown as SandboxWorker;
}

const noWorker = workerWithSnapshot([]);

function reported(message: SupervisorMessage, caps: SupervisorSettings): unknown {
  const sent: string[] = [];
  void report({ report: (text) => void sent.push(text) }, message, caps);
  expect(sent).toHaveLength(1);
  return JSON.parse(sent[0]!);
}

describe("a run's done message", () => {
  it('carries a value, its logs and whether it settled in time', async () => {
    const logs: LogEntry[] = [{ level: 'log', message: 'hi' }];
    const done = await doneMessage(run, noWorker, settings(), async () => ({
      ok: true,
      value: { n: 1 },
      logs,
      settledBeforeDeadline: true,
    }));
    expect(done).toMatchObject({ t: 'done', run, outcome: 'value', logs, settledBeforeDeadline: true });
    // The value crosses in the codec's encoding, which the host decodes.
    expect(valueCodec.decode((done as { value: unknown }).value)).toEqual({ n: 1 });
  });

  it('carries a thrown error as it was thrown', async () => {
    const done = await doneMessage(run, noWorker, settings(), async () => ({
      ok: false,
      error: 'boom',
      logs: [],
      settledBeforeDeadline: true,
    }));
    expect(done).toMatchObject({ outcome: 'threw', error: 'boom' });
  });

  it('names the result cap for a value over it, measured as it expands', async () => {
    const big = 'x'.repeat(300);
    const over = await doneMessage(run, noWorker, settings(), async () => ({
      ok: true,
      value: big,
      logs: [],
      settledBeforeDeadline: true,
    }));
    expect(over).toMatchObject({ outcome: 'fault', fault: supervisorText.resultTooLarge(302, 200) });
    // Under the cap as sent once, over it as a host writes every reference to it out.
    const shared = { text: 'y'.repeat(60) };
    const expanded = await doneMessage(run, noWorker, settings(), async () => ({
      ok: true,
      value: [shared, shared, shared, shared],
      logs: [],
      settledBeforeDeadline: true,
    }));
    expect(expanded).toMatchObject({ outcome: 'fault' });
    expect((expanded as { fault: string }).fault).toMatch(/limits\.maxResultBytes/);
  });

  it("is a fault with the worker's logs when the call itself failed", async () => {
    const logs: LogEntry[] = [{ level: 'log', message: 'before the throw' }];
    const done = await doneMessage(run, workerWithSnapshot(logs), settings(), async () => {
      throw new SyntaxError('Unexpected token');
    });
    expect(done).toEqual({
      t: 'done',
      run,
      outcome: 'fault',
      fault: 'Unexpected token',
      logs,
      settledBeforeDeadline: false,
    });
  });

  it('says a retained handle is missing', async () => {
    const done = await doneMessage(run, noWorker, settings(), async () => ({ missing: true }) as never);
    expect(done).toMatchObject({ outcome: 'missing' });
  });
});

describe('an outcome frame', () => {
  it('is measured in UTF-8 bytes against the frame cap', () => {
    expect(overFrameCap('a'.repeat(300), settings({ maxFrameBytes: 1000 }))).toBeNull();
    // 400 three-byte characters are 1200 bytes, though 400 units.
    expect(overFrameCap('€'.repeat(400), settings({ maxFrameBytes: 1000 }))).toBe(1200);
  });

  it('is sent as is when it fits', () => {
    const message: SupervisorMessage = {
      t: 'done',
      run,
      outcome: 'threw',
      error: 'e',
      logs: [],
      settledBeforeDeadline: true,
    };
    expect(reported(message, settings())).toEqual(message);
  });

  it('too large for the channel becomes a fault naming both caps, keeping logs that fit', () => {
    const caps = settings({ maxFrameBytes: 600 });
    const logs: LogEntry[] = [{ level: 'log', message: 'kept' }];
    const message: SupervisorMessage = {
      t: 'done',
      run,
      outcome: 'threw',
      error: 'e'.repeat(700),
      logs,
      settledBeforeDeadline: true,
    };
    const size = JSON.stringify(message).length;
    expect(reported(message, caps)).toEqual({
      t: 'done',
      run,
      outcome: 'fault',
      fault: supervisorText.outcomeTooLarge(size, 600, 4000),
      logs,
      settledBeforeDeadline: true,
    });
  });

  it('drops logs that do not fit beside the fault', () => {
    const caps = settings({ maxFrameBytes: 700 });
    const logs: LogEntry[] = [{ level: 'log', message: 'l'.repeat(650) }];
    const message: SupervisorMessage = {
      t: 'done',
      run,
      outcome: 'threw',
      error: 'e',
      logs,
      settledBeforeDeadline: true,
    };
    expect(reported(message, caps)).toMatchObject({ outcome: 'fault', logs: [] });
  });

  it("counts two bytes a unit through workerd's RPC once any unit needs them", () => {
    // About 490 units fit the frame (1,200 UTF-8 bytes of '€' under a 3,000 cap), but at two bytes
    // a unit not an RPC cap of 900; the same length in one-byte units does.
    const caps = settings({ maxFrameBytes: 3000, maxOutcomeRpcBytes: 900 });
    const message: SupervisorMessage = {
      t: 'done',
      run,
      outcome: 'threw',
      error: '€'.repeat(400),
      logs: [],
      settledBeforeDeadline: true,
    };
    expect(reported(message, caps)).toMatchObject({ outcome: 'fault' });
    const ascii = { ...message, error: 'e'.repeat(400) };
    expect(reported(ascii, caps)).toEqual(ascii);
  });
});
