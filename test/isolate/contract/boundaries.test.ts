/**
 * The typed boundaries between the host and a pool member: the host ↔ supervisor channel grammar
 * and the outbound relay's frames (what workerd itself writes is in
 * host/member/workerd-output.test.ts). Each parser accepts its grammar and answers `null` for
 * anything else, so nothing outside it reaches a run.
 */
import { describe, expect, it, vi } from 'vitest';
import { channelGrammar } from '../../../src/isolate/contract/channel.js';
import type { HostMessage, RunMessage, SupervisorMessage } from '../../../src/isolate/contract/messages.js';
import { relayCodec } from '../../../src/isolate/contract/relay-frame.js';
import { ExecutionTimeoutError } from '../../../src/protocol/errors.js';
import { TIMEOUT_FIRST_SENTENCE } from '../../../src/protocol/texts.js';
import type { ModuleSource } from '../../../src/protocol/types.js';

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
      const frame =
        message.t === 'run'
          ? new TextDecoder().decode(channelGrammar.encodeRunFrame(message))
          : channelGrammar.encodeHostMessage(message);
      expect(channelGrammar.parseHostMessage(frame)).toEqual(message);
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

  const decode = (frame: Uint8Array) => new TextDecoder('utf-8', { fatal: true }).decode(frame);
  const runMessage = (modules: Record<string, ModuleSource>, id = 'r1'): RunMessage => ({
    t: 'run',
    run: id,
    entry: 'export default "\u00e9"',
    modules,
    outbound: false,
    retain: false,
    bound: 0,
  });

  it("encodes a frozen module's bytes once, however many runs carry it, and reads each run back whole", () => {
    const zod = Object.freeze({ js: 'export const z = "\\"quoted\\"\\n", e = "\u00e9 \u{1f600}";' });
    const settings = { value: 1 };
    const config = Object.freeze({ json: settings });
    const run = (id: string) => runMessage({ zod, 'config.json': config, 'own.js': 'export const own = 1' }, id);
    const encode = vi.spyOn(TextEncoder.prototype, 'encode');
    try {
      for (const id of ['r1', 'r2', 'r3']) {
        settings.value += 1;
        const parsed = channelGrammar.parseHostMessage(decode(channelGrammar.encodeRunFrame(run(id))));
        // The `{json}` module's value changed under its frozen module: it is read afresh each time.
        expect(parsed).toEqual(run(id));
        expect(Object.keys((parsed as RunMessage).modules)).toEqual(['zod', 'config.json', 'own.js']);
      }
      expect(encode.mock.calls.filter(([text]) => text === zod.js)).toHaveLength(1);
    } finally {
      encode.mockRestore();
    }
  });

  it("carries every kind of module in a run's frame, raw or in its head, in the map's order", () => {
    const modules: Record<string, ModuleSource> = {
      'plain.js': 'export const p = "\u{1f600}"',
      'b.cjs': { cjs: 'module.exports = 1' },
      'empty.txt': { text: '' },
      'data.json': { json: { a: [1, '\ud800'] } },
      // A lone surrogate has no UTF-8 form: this module travels escaped in the head.
      'lone.js': Object.freeze({ js: 'export const s = "\ud800"' }),
      'a/é.js': { js: 'export const e = "\u00e9"' },
    };
    const frame = decode(channelGrammar.encodeRunFrame(runMessage(modules)));
    expect(frame.startsWith('#')).toBe(true);
    const parsed = channelGrammar.parseHostMessage(frame) as RunMessage;
    expect(parsed).toEqual(runMessage(modules));
    expect(Object.keys(parsed.modules)).toEqual(Object.keys(modules));
    expect(channelGrammar.parseHostMessage(decode(channelGrammar.encodeRunFrame(runMessage({}))))).toEqual(
      runMessage({}),
    );
  });

  it("refuses a run's frame whose head or texts do not add up", () => {
    const good = decode(
      channelGrammar.encodeRunFrame(runMessage({ 'a.js': 'export const a = 1', 'b.txt': { text: 'bb' } })),
    );
    const newline = good.indexOf('\n');
    const headLength = Number(good.slice(1, newline));
    const head = good.slice(newline + 1, newline + 1 + headLength);
    const texts = good.slice(newline + 1 + headLength);
    const frameOf = (someHead: string, someTexts = texts) => `#${someHead.length}\n${someHead}${someTexts}`;
    expect(channelGrammar.parseHostMessage(frameOf(head))).toEqual(
      runMessage({ 'a.js': 'export const a = 1', 'b.txt': { text: 'bb' } }),
    );
    const refused: [string, string][] = [
      ['a byte past its texts', `${good}x`],
      ['a text cut short', good.slice(0, -1)],
      ['a head longer than the frame', `#${good.length}\n${head}`],
      ['no head length', `#\n${head}${texts}`],
      ['a head length with a sign', `#+${headLength}\n${head}${texts}`],
      ['a head that is not JSON', frameOf(head.slice(1))],
      ['a head of another message', frameOf(head.replace('"t":"run"', '"t":"cancel"'))],
      ['an unknown kind', frameOf(head.replace('"text",2', '"wasm",2'))],
      ['a negative length', frameOf(head.replace('"text",2', '"text",-2'), texts)],
      ['a fractional length', frameOf(head.replace('"text",2', '"text",1.5'), texts)],
      ['a modules record, not an array', frameOf(head.replace(/"modules":\[.*\]/, '"modules":{}'), '')],
      ['an entry without a name', frameOf(head.replace('["b.txt",', '[1,'))],
      [
        'an inline module outside the grammar',
        frameOf(head.replace(/\["b\.txt","text",2\]/, '["b.txt",{"wasm":"x"}]'), texts.slice(0, -2)),
      ],
    ];
    for (const [what, frame] of refused) expect(channelGrammar.parseHostMessage(frame), what).toBeNull();
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

  // A run has one frame, its head and raw texts: these are encoded as one would be, out of the grammar.
  const runFrame = (run: object) => new TextDecoder().decode(channelGrammar.encodeRunFrame(run as RunMessage));
  const malformedRuns: [string, string][] = [
    ['a run without a bound', runFrame({ ...hostMessages[0], bound: undefined })],
    ['a run with a negative bound', runFrame({ ...hostMessages[0], bound: -1 })],
    ['a run with a module of two kinds', runFrame({ ...hostMessages[0], modules: { 'a.js': { js: 'a', text: 'b' } } })],
    ['a run sent as JSON, the frame it had before it had one of its own', JSON.stringify(hostMessages[0])],
  ];
  for (const [what, frame] of malformedRuns) {
    it(`refuses ${what} from the host`, () => {
      expect(channelGrammar.parseHostMessage(frame)).toBeNull();
    });
  }

  const malformedHost: [string, unknown][] = [
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
