/**
 * The grammar of the channel between the host and a pool member's supervisor: one text frame per
 * message, every message one member of a discriminated union on `t`. Each frame is the message's
 * JSON, but for an answer and a run. An answer's envelope is JSON already, so its frame carries it
 * as it is after a short head (`encodeHostMessage`), instead of escaping it into a JSON string a
 * second time; a run's modules follow its head as raw text (`encodeRunFrame`), for the same reason.
 *
 * The supervisor's bundle imports this module, so both ends parse with one implementation; the
 * messages themselves are messages.ts. A parser returns `null` for a frame outside the grammar;
 * it never throws.
 */

import type { LogEntry, ModuleSource } from '../../protocol/types.js';
import type { DoneBase, DoneMessage, HostMessage, RunMessage, SupervisorMessage } from './messages.js';

/** The host messages framed as JSON text (an answer as its short head): all but a run. */
export type FramedAsText = Exclude<HostMessage, RunMessage>;

export interface ChannelGrammar {
  /** The frame of a host message other than a run, whose one frame is `encodeRunFrame`'s. */
  encodeHostMessage(message: FramedAsText): string;
  /**
   * A run's frame as UTF-8, with its modules' texts raw after a JSON head (the grammar below), each
   * frozen module's bytes encoded once: what `parseHostMessage` reads back as the run.
   */
  encodeRunFrame(message: RunMessage): Uint8Array;
  parseHostMessage(text: string): HostMessage | null;
  parseSupervisorMessage(text: string): SupervisorMessage | null;
  /** One module of a request (`{js}`, `{cjs}`, `{text}`, `{json}` or source text), as the channel carries it. */
  parseModuleSource(value: unknown): ModuleSource | null;
}

export function createChannelGrammar(): ChannelGrammar {
  type Fields = Map<string, unknown>;
  /** An answer's frame: this tag, its `ask` in decimal, a newline, then the envelope as it is. */
  const ANSWER_TAG = '@';
  const ASK_DIGITS = /^(?:0|[1-9][0-9]*)$/;

  /**
   * A run's frame: `#`, the head's length (in UTF-16 code units, as the supervisor reads the frame),
   * a newline, the head, then the text of each module that travels raw, one after another. The
   * head is the run's JSON but for `modules`, an array in the map's order of `[name, kind, length]`
   * for a module whose text follows the head (kind `js`, `cjs`, `text`, or `""` for a plain string)
   * and `[name, source]` for one carried inside the head (a `{json}` module, or a text with a lone
   * surrogate, which UTF-8 cannot carry). The raw texts are neither escaped by the host nor
   * unescaped by the supervisor, which takes them as slices of the frame: a set of hundreds of KiB
   * costs the host a copy of bytes encoded once, and the member no parse of them.
   */
  const RUN_TAG = '#';
  const RAW_KINDS: ReadonlySet<string> = new Set(['js', 'cjs', 'text', '']);
  const LONE_SURROGATE = /[\uD800-\uDFFF]/u;
  const utf8 = new TextEncoder();

  interface RawText {
    kind: string;
    length: number;
    bytes: Uint8Array;
  }

  /** A frozen module's raw text and its UTF-8 bytes, by the module, or null when it travels in the head. */
  const rawTexts = new WeakMap<object, RawText | null>();

  function rawTextOf(source: ModuleSource): RawText | null {
    if (typeof source === 'string') return rawText('', source);
    // A `{json}` module's value may be an object that changes under a frozen module: never kept.
    if (!Object.isFrozen(source) || !Object.values(source).every((value) => typeof value === 'string'))
      return rawTextUncached(source);
    let raw = rawTexts.get(source);
    if (raw === undefined) rawTexts.set(source, (raw = rawTextUncached(source)));
    return raw;
  }

  function rawTextUncached(source: Exclude<ModuleSource, string>): RawText | null {
    const [entry] = Object.entries(source);
    if (entry === undefined || Object.keys(source).length !== 1) return null;
    const [kind, text] = entry;
    return RAW_KINDS.has(kind) && kind !== '' && typeof text === 'string' ? rawText(kind, text) : null;
  }

  function rawText(kind: string, text: string): RawText | null {
    return LONE_SURROGATE.test(text) ? null : { kind, length: text.length, bytes: utf8.encode(text) };
  }

  function encodeRunFrame(message: RunMessage): Uint8Array {
    const { modules, ...rest } = message;
    const entries: unknown[] = [];
    const texts: Uint8Array[] = [];
    for (const [name, source] of Object.entries(modules)) {
      const raw = rawTextOf(source);
      if (raw === null) entries.push([name, source]);
      else {
        entries.push([name, raw.kind, raw.length]);
        texts.push(raw.bytes);
      }
    }
    const head = JSON.stringify({ ...rest, modules: entries });
    const parts = [utf8.encode(`${RUN_TAG}${head.length}\n${head}`), ...texts];
    const frame = new Uint8Array(parts.reduce((size, part) => size + part.byteLength, 0));
    let at = 0;
    for (const part of parts) {
      frame.set(part, at);
      at += part.byteLength;
    }
    return frame;
  }

  function encodeHostMessage(message: FramedAsText): string {
    if (message.t === 'answer') return `${ANSWER_TAG}${message.ask}\n${message.envelope}`;
    return JSON.stringify(message);
  }

  function parseAnswer(text: string): HostMessage | null {
    const newline = text.indexOf('\n');
    const digits = newline < 0 ? '' : text.slice(ANSWER_TAG.length, newline);
    if (!ASK_DIGITS.test(digits)) return null;
    const ask = Number(digits);
    return Number.isSafeInteger(ask) ? { t: 'answer', ask, envelope: text.slice(newline + 1) } : null;
  }

  function fieldsOf(text: string): Fields | null {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return null;
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return null;
    return new Map(Object.entries(parsed));
  }

  function string(fields: Fields, key: string): string | null {
    const value = fields.get(key);
    return typeof value === 'string' ? value : null;
  }

  function boolean(fields: Fields, key: string): boolean | null {
    const value = fields.get(key);
    return typeof value === 'boolean' ? value : null;
  }

  function count(fields: Fields, key: string): number | null {
    const value = fields.get(key);
    return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : null;
  }

  function milliseconds(fields: Fields, key: string): number | null {
    const value = fields.get(key);
    return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : null;
  }

  function logsOf(value: unknown): LogEntry[] | null {
    if (!Array.isArray(value)) return null;
    const logs: LogEntry[] = [];
    for (const entry of value) {
      if (typeof entry !== 'object' || entry === null) return null;
      const fields = new Map<string, unknown>(Object.entries(entry));
      const level = fields.get('level');
      const message = fields.get('message');
      if ((level !== 'log' && level !== 'warn' && level !== 'error') || typeof message !== 'string') return null;
      logs.push({ level, message });
    }
    return logs;
  }

  function moduleOf(value: unknown): ModuleSource | null {
    if (typeof value === 'string') return value;
    if (typeof value !== 'object' || value === null) return null;
    const entries = Object.entries(value);
    const [first] = entries;
    if (entries.length !== 1 || first === undefined) return null;
    const [kind, content] = first;
    if (kind === 'json') return content === undefined ? null : { json: content };
    if (typeof content !== 'string') return null;
    if (kind === 'js') return { js: content };
    if (kind === 'cjs') return { cjs: content };
    if (kind === 'text') return { text: content };
    return null;
  }

  function runOf(fields: Fields, modules: Record<string, ModuleSource> | null): HostMessage | null {
    const run = string(fields, 'run');
    const entry = string(fields, 'entry');
    const outbound = boolean(fields, 'outbound');
    const retain = boolean(fields, 'retain');
    const bound = milliseconds(fields, 'bound');
    if (run === null || entry === null || modules === null || outbound === null || retain === null) return null;
    if (bound === null) return null;
    const live = fields.get('live');
    if (live !== undefined && typeof live !== 'boolean') return null;
    return { t: 'run', run, entry, modules, outbound, retain, bound, ...(live === true ? { live } : {}) };
  }

  /** A run's frame (encodeRunFrame): its head, then the raw texts its `modules` entries measure, exactly. */
  function parseRunFrame(text: string): HostMessage | null {
    const newline = text.indexOf('\n');
    const digits = newline < 0 ? '' : text.slice(RUN_TAG.length, newline);
    if (!ASK_DIGITS.test(digits)) return null;
    let at = newline + 1 + Number(digits);
    if (at > text.length) return null;
    const fields = fieldsOf(text.slice(newline + 1, at));
    const entries = fields?.get('modules');
    if (fields === null || fields.get('t') !== 'run' || !Array.isArray(entries)) return null;
    const modules: Record<string, ModuleSource> = {};
    for (const entry of entries) {
      if (!Array.isArray(entry) || typeof entry[0] !== 'string') return null;
      const name: string = entry[0];
      if (entry.length === 2) {
        const module = moduleOf(entry[1]);
        if (module === null) return null;
        modules[name] = module;
        continue;
      }
      const [, kind, length] = entry as unknown[];
      if (entry.length !== 3 || typeof kind !== 'string' || !RAW_KINDS.has(kind)) return null;
      if (typeof length !== 'number' || !Number.isSafeInteger(length) || length < 0) return null;
      if (at + length > text.length) return null;
      const content = text.slice(at, at + length);
      at += length;
      modules[name] = kind === '' ? content : ({ [kind]: content } as ModuleSource);
    }
    return at === text.length ? runOf(fields, modules) : null;
  }

  function parseHostMessage(text: string): HostMessage | null {
    if (text.startsWith(ANSWER_TAG)) return parseAnswer(text);
    if (text.startsWith(RUN_TAG)) return parseRunFrame(text);
    const fields = fieldsOf(text);
    if (fields === null) return null;
    switch (fields.get('t')) {
      case 'invoke': {
        const run = string(fields, 'run');
        const exec = string(fields, 'exec');
        const handle = string(fields, 'handle');
        const bound = milliseconds(fields, 'bound');
        if (run === null || exec === null || handle === null || bound === null || !fields.has('args')) return null;
        const live = fields.get('live');
        if (live !== undefined && typeof live !== 'boolean') return null;
        const message: HostMessage = { t: 'invoke', run, exec, handle, args: fields.get('args'), bound };
        return live === true ? { ...message, live } : message;
      }
      case 'cancel': {
        const run = string(fields, 'run');
        const raceMayWin = boolean(fields, 'raceMayWin');
        return run === null || raceMayWin === null ? null : { t: 'cancel', run, raceMayWin };
      }
      case 'release': {
        const exec = string(fields, 'exec');
        return exec === null ? null : { t: 'release', exec };
      }
      default:
        return null;
    }
  }

  function parseDone(fields: Fields, run: string): DoneMessage | null {
    const logs = logsOf(fields.get('logs'));
    const settledBeforeDeadline = boolean(fields, 'settledBeforeDeadline');
    if (logs === null || settledBeforeDeadline === null) return null;
    const base: DoneBase = { t: 'done', run, logs, settledBeforeDeadline };
    switch (fields.get('outcome')) {
      case 'value':
        return fields.has('value') ? { ...base, outcome: 'value', value: fields.get('value') } : null;
      case 'threw': {
        const error = string(fields, 'error');
        return error === null ? null : { ...base, outcome: 'threw', error };
      }
      case 'fault': {
        const fault = string(fields, 'fault');
        return fault === null ? null : { ...base, outcome: 'fault', fault };
      }
      case 'missing':
        return { ...base, outcome: 'missing' };
      default:
        return null;
    }
  }

  function parseSupervisorMessage(text: string): SupervisorMessage | null {
    const fields = fieldsOf(text);
    if (fields === null) return null;
    const run = string(fields, 'run');
    if (run === null) return null;
    switch (fields.get('t')) {
      case 'call': {
        const ask = count(fields, 'ask');
        const provider = string(fields, 'provider');
        const tool = string(fields, 'tool');
        const args = string(fields, 'args');
        if (ask === null || provider === null || tool === null || args === null) return null;
        return { t: 'call', run, ask, provider, tool, args };
      }
      case 'line': {
        const index = count(fields, 'index');
        const [entry] = logsOf([{ level: fields.get('level'), message: fields.get('message') }]) ?? [];
        return index === null || entry === undefined ? null : { t: 'line', run, index, ...entry };
      }
      case 'done':
        return parseDone(fields, run);
      case 'cancelled': {
        const logs = logsOf(fields.get('logs'));
        return logs === null ? null : { t: 'cancelled', run, logs };
      }
      case 'started':
        return { t: 'started', run };
      default:
        return null;
    }
  }

  return { encodeHostMessage, encodeRunFrame, parseHostMessage, parseSupervisorMessage, parseModuleSource: moduleOf };
}

export const channelGrammar: ChannelGrammar = /* @__PURE__ */ createChannelGrammar();
