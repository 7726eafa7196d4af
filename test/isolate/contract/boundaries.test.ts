/**
 * The typed boundaries between the host and a pool member: the host ↔ supervisor channel grammar
 * and the outbound relay's frames (what workerd itself writes is in
 * host/member/workerd-output.test.ts). Each parser accepts its grammar and answers `null` for
 * anything else, so nothing outside it reaches a run.
 */
import { describe, expect, it, vi } from 'vitest';
import { channelGrammar } from '../../../src/isolate/contract/channel.js';
import type { HostMessage, SupervisorMessage } from '../../../src/isolate/contract/messages.js';
import { relayCodec } from '../../../src/isolate/contract/relay-frame.js';
import { ExecutionTimeoutError } from '../../../src/protocol/errors.js';
import { TIMEOUT_FIRST_SENTENCE } from '../../../src/protocol/texts.js';

const hostMessages: HostMessage[] = [
  {
    t: 'run',
    run: 'r1',
    entry: 'export default 1',
    modules: { 'a.js': 'x', 'b.json': { json: { n: 1 } }, 'c.txt': { text: 't' }, 'd.js': { js: 'j' } },
    outbound: true,
    retain: false,
    bound: 0,
  },
  { t: 'invoke', run: 'r2', exec: 'r1', handle: '1', args: ['a', 2], bound: 1000 },
  { t: 'cancel', run: 'r2', raceMayWin: true },
  { t: 'release', exec: 'r1' },
  { t: 'answer', ask: 3, envelope: '{"result":1}' },
];

const supervisorMessages: SupervisorMessage[] = [
  { t: 'call', run: 'r1', ask: 1, provider: 'api', tool: 'search', args: '[]' },
  {
    t: 'done',
    run: 'r1',
    outcome: 'value',
    value: ['u'],
    logs: [{ level: 'warn', message: 'w' }],
    settledBeforeDeadline: true,
  },
  { t: 'done', run: 'r1', outcome: 'threw', error: 'boom', logs: [], settledBeforeDeadline: false },
  { t: 'done', run: 'r1', outcome: 'fault', fault: 'Failed to start Worker', logs: [], settledBeforeDeadline: true },
  { t: 'done', run: 'r1', outcome: 'missing', logs: [], settledBeforeDeadline: true },
  { t: 'cancelled', run: 'r1', logs: [{ level: 'log', message: 'l' }] },
];

describe('the channel grammar', () => {
  it('reads back every host message it was given', () => {
    for (const message of hostMessages) {
      expect(channelGrammar.parseHostMessage(channelGrammar.encodeHostMessage(message))).toEqual(message);
      if (message.t === 'run') {
        const frame = new TextDecoder().decode(channelGrammar.encodeRunFrame(message));
        expect(channelGrammar.parseHostMessage(frame)).toEqual(message);
      }
    }
  });

  it("carries an answer's envelope as it is, not escaped into a JSON string again", () => {
    const envelope = '{"result":"a \\"quoted\\" line\\nand @ more"}';
    const frame = channelGrammar.encodeHostMessage({ t: 'answer', ask: 12, envelope });
    expect(frame).toBe(`@12\n${envelope}`);
    expect(channelGrammar.parseHostMessage(frame)).toEqual({ t: 'answer', ask: 12, envelope });
    const multiline = 'line one\n@3\nline three';
    expect(channelGrammar.parseHostMessage(`@0\n${multiline}`)).toEqual({ t: 'answer', ask: 0, envelope: multiline });
  });

  it("encodes a frozen module's bytes once, however many runs carry it, and reads each run back whole", () => {
    const zod = Object.freeze({ js: 'export const z = "\\"quoted\\"\\n", é = "\u00e9 \u{1f600} \ud800";' });
    const settings = { value: 1 };
    const config = Object.freeze({ json: settings });
    const run = (id: string): HostMessage => ({
      t: 'run',
      run: id,
      entry: 'export default 1',
      modules: { zod, 'config.json': config, 'own.js': 'export const own = 1' },
      outbound: false,
      retain: false,
      bound: 0,
    });
    const stringify = vi.spyOn(JSON, 'stringify');
    try {
      const frames = ['r1', 'r2', 'r3'].map((id) => {
        settings.value += 1;
        const message = run(id) as Extract<HostMessage, { t: 'run' }>;
        const frame = new TextDecoder('utf-8', { fatal: true }).decode(channelGrammar.encodeRunFrame(message));
        expect(JSON.parse(frame)).toEqual(JSON.parse(JSON.stringify(message)));
        expect(frame.length).toBe(JSON.stringify(message).length);
        expect(channelGrammar.parseHostMessage(frame)).toEqual(run(id));
        return frame;
      });
      // The `{json}` module's value changed under its frozen module: it is escaped again each time.
      expect(
        frames.map(
          (frame) =>
            (JSON.parse(frame) as { modules: { 'config.json': { json: unknown } } }).modules['config.json'].json,
        ),
      ).toEqual([{ value: 2 }, { value: 3 }, { value: 4 }]);
      expect(stringify.mock.calls.filter(([value]) => value === zod)).toHaveLength(1);
      expect(stringify.mock.calls.filter(([value]) => value === config).length).toBeGreaterThanOrEqual(3);
    } finally {
      stringify.mockRestore();
    }
  });

  const malformedAnswers: [string, string][] = [
    ['without a newline', '@3'],
    ['without an ask', '@\n{}'],
    ['whose ask has a sign', '@-1\n{}'],
    ['whose ask has a leading zero', '@01\n{}'],
    ['whose ask is not decimal digits', '@1e3\n{}'],
    ['whose ask is past a safe integer', `@${2 ** 53}\n{}`],
    ['in JSON', JSON.stringify({ t: 'answer', ask: 1, envelope: '{}' })],
  ];
  for (const [what, frame] of malformedAnswers) {
    it(`refuses an answer ${what}`, () => {
      expect(channelGrammar.parseHostMessage(frame)).toBeNull();
    });
  }

  it('reads back every supervisor message it was given', () => {
    for (const message of supervisorMessages) {
      expect(channelGrammar.parseSupervisorMessage(JSON.stringify(message))).toEqual(message);
    }
  });

  const malformedSupervisor: [string, unknown][] = [
    ['text that is not JSON', '{'],
    ['an array', '[]'],
    ['an unknown tag', { t: 'exec', run: 'r1' }],
    ['a message without its run', { t: 'cancelled', logs: [] }],
    ['a call whose ask is not a count', { t: 'call', run: 'r', ask: -1, provider: 'a', tool: 'b', args: '[]' }],
    ['a call whose arguments are not text', { t: 'call', run: 'r', ask: 1, provider: 'a', tool: 'b', args: [] }],
    ['a done with an unknown outcome', { t: 'done', run: 'r', outcome: 'won', logs: [], settledBeforeDeadline: true }],
    [
      'a done value without its value',
      { t: 'done', run: 'r', outcome: 'value', logs: [], settledBeforeDeadline: true },
    ],
    ['a done without settledBeforeDeadline', { t: 'done', run: 'r', outcome: 'threw', error: 'e', logs: [] }],
    ['a log of an uncaptured level', { t: 'cancelled', run: 'r', logs: [{ level: 'info', message: 'm' }] }],
    ['a log whose message is not text', { t: 'cancelled', run: 'r', logs: [{ level: 'log', message: 1 }] }],
  ];
  for (const [what, frame] of malformedSupervisor) {
    it(`refuses ${what} from the supervisor`, () => {
      const text = typeof frame === 'string' ? frame : JSON.stringify(frame);
      expect(channelGrammar.parseSupervisorMessage(text)).toBeNull();
    });
  }

  const malformedHost: [string, unknown][] = [
    ['a run without a bound', { ...hostMessages[0], bound: undefined }],
    ['a run with a negative bound', { ...hostMessages[0], bound: -1 }],
    ['a run with a module of two kinds', { ...hostMessages[0], modules: { 'a.js': { js: 'a', text: 'b' } } }],
    ['an invoke without args', { t: 'invoke', run: 'r', exec: 'e', handle: 'h', bound: 1 }],
    ['a cancel whose raceMayWin is not a boolean', { t: 'cancel', run: 'r', raceMayWin: 'yes' }],
    ['an answer without its envelope', { t: 'answer', ask: 1 }],
  ];
  for (const [what, frame] of malformedHost) {
    it(`refuses ${what} from the host`, () => {
      expect(channelGrammar.parseHostMessage(JSON.stringify(frame))).toBeNull();
    });
  }
});

describe('the relay frames', () => {
  it('carries a request head and its body bytes', () => {
    const head = {
      url: 'https://x.test/',
      method: 'PUT',
      headers: [['a', 'b']] as [string, string][],
      nullBody: false,
    };
    const frame = relayCodec.decodeRequest(relayCodec.encodeRequest(head, new Uint8Array([0, 255, 7])));
    expect(frame?.head).toEqual(head);
    expect([...(frame?.body ?? [])]).toEqual([0, 255, 7]);
  });

  it('carries a response head and a failure head', () => {
    const response = { ok: true as const, status: 201, statusText: 'Made', headers: [], nullBody: true };
    expect(relayCodec.decodeReply(relayCodec.encodeReply(response, new Uint8Array()))?.head).toEqual(response);
    const failure = { ok: false as const, error: 'no network today' };
    expect(relayCodec.decodeReply(relayCodec.encodeReply(failure, new Uint8Array()))?.head).toEqual(failure);
  });

  it('refuses a frame shorter than its head, a head that is not JSON, and a head missing a field', () => {
    const bytes = relayCodec.encodeRequest({ url: 'u', method: 'GET', headers: [], nullBody: true }, new Uint8Array());
    expect(relayCodec.decodeRequest(bytes.subarray(0, 3))).toBeNull();
    expect(relayCodec.decodeRequest(bytes.subarray(0, bytes.length - 1))).toBeNull();
    const garbage = new Uint8Array([0, 0, 0, 1, 0x7b]);
    expect(relayCodec.decodeRequest(garbage)).toBeNull();
    const headless = new TextEncoder().encode('{"url":"u","method":"GET","headers":[["a"]],"nullBody":true}');
    const frame = new Uint8Array(4 + headless.length);
    new DataView(frame.buffer).setUint32(0, headless.length);
    frame.set(headless, 4);
    expect(relayCodec.decodeRequest(frame)).toBeNull();
    expect(relayCodec.decodeReply(frame)).toBeNull();
  });
});

describe('the timeout text', () => {
  it('is recognized, with the bound it names, for every bound a request may ask for', () => {
    for (const bound of [0, 300, 1.5, 60_000, 1e21]) {
      const text = ExecutionTimeoutError.format(bound);
      expect(ExecutionTimeoutError.matches(text)).toBe(true);
      expect(Number(TIMEOUT_FIRST_SENTENCE.exec(text)?.[1])).toBe(bound);
    }
  });

  it('is not a program text that merely opens with the same words', () => {
    expect(ExecutionTimeoutError.matches('Execution timed out waiting for the vendor API')).toBe(false);
    expect(ExecutionTimeoutError.matches('Execution timed out at its 300 ms bound, the vendor said')).toBe(false);
  });
});
