/**
 * Live events (docs/observing.md) on the real executors, in process (IsolateExecutor) and over a
 * daemon (connect()): the same program gives the same events in the same order on both, every
 * event holds to schema/run-events.schema.json, console lines arrive while the run still runs, and
 * a slow or throwing callback never holds up nor fails the run.
 */
import { describe, expect, it, vi } from 'vitest';
import { CodemodeExecutor } from '../../src/codemode/codemode-executor.js';
import { createEnvelopeDispatch } from '../../src/protocol/dispatch.js';
import type { RunEvent } from '../../src/protocol/types.js';
import { isolateAndRemote } from '../support/isolate-and-remote.js';
import { withSlack } from '../support/machine-slack.js';
import { expectValidEvents } from './support/valid-event.js';

const real = isolateAndRemote();

const executors = [
  ['in process', () => real.isolate],
  ['over the daemon', () => real.remote],
] as const;

/** The fields a test can assert: every event without its clock readings. */
function shapes(events: readonly RunEvent[]): unknown[] {
  return events.map((event) => {
    const { elapsedMs: _e, ...rest } = event as RunEvent & { durationMs?: number; wallMs?: number; cpuMs?: number };
    delete rest.durationMs;
    delete rest.wallMs;
    delete rest.cpuMs;
    return rest;
  });
}

describe.each(executors)('live events %s', (_where, native) => {
  it('sees console, tool-call, tool-result and end, in order, through CodemodeExecutor', async () => {
    const events: RunEvent[] = [];
    const executor = new CodemodeExecutor(native());
    const weather = { name: 'weather', fns: { get: async ({ city }: { city: string }) => ({ city, celsius: 12 }) } };
    const result = await executor.execute(
      'console.log("asking")\nconst w = await weather.get({ city: "Oslo" })\nconsole.warn("got", w.celsius)\nw.celsius',
      [weather],
      { onEvent: (event) => void events.push(event) },
    );
    expect(result).toEqual({ result: 12, logs: ['asking', '[warn] got 12'] });
    const argsBytes = JSON.stringify([{ city: 'Oslo' }]).length;
    const resultBytes = JSON.stringify({ result: { city: 'Oslo', celsius: 12 } }).length;
    expect(shapes(events)).toEqual([
      { type: 'console', level: 'log', text: 'asking', index: 0 },
      { type: 'tool-call', callId: 0, provider: 'weather', tool: 'get', argsBytes },
      { type: 'tool-result', callId: 0, resultBytes },
      { type: 'console', level: 'warn', text: 'got 12', index: 1 },
      { type: 'end', outcome: 'result', dropped: 0 },
    ]);
    expectValidEvents(events);
    const end = events.at(-1) as Extract<RunEvent, { type: 'end' }>;
    expect(end.wallMs).toBeGreaterThanOrEqual(0);
    // Non-decreasing clock readings: the events were delivered in the order they happened.
    const elapsed = events.map((event) => event.elapsedMs);
    expect(elapsed).toEqual([...elapsed].sort((a, b) => a - b));
  }, 60_000);

  it('delivers a console line while the run still runs: a tool waits for it', async () => {
    let seen: (() => void) | undefined;
    const lineSeen = new Promise<void>((resolve) => {
      seen = resolve;
    });
    const waitForLine = async () => {
      const late = new Promise<string>((resolve) => setTimeout(() => resolve('not live'), withSlack(10_000)));
      return Promise.race([lineSeen.then(() => 'live'), late]);
    };
    const executor = new CodemodeExecutor(native());
    const result = await executor.execute(
      'console.log("before the wait")\nawait gate.wait()',
      [{ name: 'gate', fns: { wait: waitForLine } }],
      {
        timeout: withSlack(20_000),
        onEvent: (event) => {
          if (event.type === 'console' && event.text === 'before the wait') seen?.();
        },
      },
    );
    expect(result).toEqual({ result: 'live', logs: ['before the wait'] });
  }, 60_000);

  it("gives a failed tool call's text and the run's failure", async () => {
    const events: RunEvent[] = [];
    const executor = new CodemodeExecutor(native());
    const db = {
      name: 'db',
      fns: {
        drop: () => {
          throw new Error('drop is not allowed');
        },
      },
    };
    const result = await executor.execute('await db.drop("users")', [db], { onEvent: (e) => void events.push(e) });
    expect(result.error).toBe('drop is not allowed');
    expect(shapes(events)).toEqual([
      { type: 'tool-call', callId: 0, provider: 'db', tool: 'drop', argsBytes: '["users"]'.length },
      { type: 'tool-result', callId: 0, error: 'drop is not allowed' },
      { type: 'end', outcome: 'error', error: 'drop is not allowed', dropped: 0 },
    ]);
    expectValidEvents(events);
  }, 60_000);

  it('gives a fetch through the host its method, origin and status, never its path', async () => {
    const events: RunEvent[] = [];
    const result = await native().execute(
      {
        code: 'async () => (await fetch("https://api.example:8443/secret/path?q=1", { method: "POST", body: "x" })).status',
        outbound: () => new Response('made', { status: 201 }),
      },
      { onEvent: (e) => void events.push(e) },
    );
    expect(result.result).toBe(201);
    expect(shapes(events)).toEqual([
      { type: 'fetch', method: 'POST', origin: 'https://api.example:8443', status: 201 },
      { type: 'end', outcome: 'result', dropped: 0 },
    ]);
    expect(JSON.stringify(events)).not.toContain('secret');
    expectValidEvents(events);
  }, 60_000);

  it('never waits for a slow callback: events past maxQueuedEvents are dropped, and end counts them', async () => {
    const events: RunEvent[] = [];
    let release: (() => void) | undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const result = await native().execute(
      {
        code: 'async () => { for (let i = 0; i < 6; i++) await t.ping(i); return "done" }',
        providers: [{ name: 't', tools: ['ping'] }],
        dispatch: createEnvelopeDispatch({ t: () => 'pong' }, { active: true }),
      },
      {
        maxQueuedEvents: 3,
        // The first event's promise stays pending until the run is over.
        onEvent: (event) => {
          events.push(event);
          return events.length === 1 ? held : undefined;
        },
      },
    );
    expect(result.result).toBe('done');
    // The run ended while the callback still worked on its first event.
    expect(events).toHaveLength(1);
    release?.();
    await vi.waitFor(() => expect(events.at(-1)?.type).toBe('end'));
    // 12 call events: the first delivered, 3 queued, 8 dropped; then end.
    expect(events.map((e) => e.type)).toEqual(['tool-call', 'tool-result', 'tool-call', 'tool-result', 'end']);
    expect(events.at(-1)).toMatchObject({ type: 'end', outcome: 'result', dropped: 8 });
  }, 60_000);

  it('never fails the run for a throwing callback: it is reported once on console.warn', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    try {
      const executor = new CodemodeExecutor(native());
      const result = await executor.execute('console.log(1); console.log(2); 3', [], {
        onEvent: () => {
          throw new Error('observer broke');
        },
      });
      expect(result).toEqual({ result: 3, logs: ['1', '2'] });
      expect(warn.mock.calls.filter(([text]) => String(text).includes('observer broke'))).toHaveLength(1);
    } finally {
      warn.mockRestore();
    }
  }, 60_000);

  it('gives a handle call its own events', async () => {
    const tools = createEnvelopeDispatch({ t: (_tool, args) => `seen ${String(args[0])}` }, { active: true });
    const made = await native().execute({
      code: 'async () => ({ greet: async (name) => { console.log("hi", name); return await t.echo(name) } })',
      providers: [{ name: 't', tools: ['echo'] }],
      dispatch: tools,
      retainHandles: true,
    });
    const handle = (made.result as { greet: { __codemode_handle__: string } }).greet.__codemode_handle__;
    const events: RunEvent[] = [];
    try {
      const called = await native().invokeHandle(
        { executionId: made.executionId as string, handle, args: ['ada'], dispatch: tools },
        { onEvent: (e) => void events.push(e) },
      );
      expect(called.result).toBe('seen ada');
    } finally {
      await native().closeHandles(made.executionId as string);
    }
    expect(shapes(events)).toEqual([
      { type: 'console', level: 'log', text: 'hi ada', index: 0 },
      { type: 'tool-call', callId: 0, provider: 't', tool: 'echo', argsBytes: '["ada"]'.length },
      { type: 'tool-result', callId: 0, resultBytes: JSON.stringify({ result: 'seen ada' }).length },
      { type: 'end', outcome: 'result', dropped: 0 },
    ]);
    expectValidEvents(events);
  }, 60_000);

  it('refuses a wrong event option before anything runs, naming it', async () => {
    await expect(native().execute({ code: 'async () => 1' }, { onEvent: 'log' as never })).rejects.toMatchObject({
      code: 'INVALID_REQUEST',
      message: expect.stringContaining('onEvent must be a function'),
    });
    await expect(
      native().execute({ code: 'async () => 1' }, { onEvent: () => {}, maxQueuedEvents: 0 }),
    ).rejects.toMatchObject({ code: 'INVALID_REQUEST', message: expect.stringContaining('maxQueuedEvents must be') });
  });
});
