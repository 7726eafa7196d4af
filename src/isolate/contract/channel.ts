/**
 * The grammar of the channel between the host and a pool member's supervisor: one text frame per
 * message, every message one member of a discriminated union on `t`. Each frame is the message's
 * JSON, but for an answer: its envelope is JSON already, so its frame carries it as it is after a
 * short head (`encodeHostMessage`), instead of escaping it into a JSON string a second time.
 *
 * The supervisor's bundle imports this module, so both ends parse with one implementation; the
 * messages themselves are messages.ts. A parser returns `null` for a frame outside the grammar;
 * it never throws.
 */

import type { LogEntry, ModuleSource } from '../../protocol/types.js';
import type { DoneBase, DoneMessage, HostMessage, RunMessage, SupervisorMessage } from './messages.js';

export interface ChannelGrammar {
  /** The frame of a host message. */
  encodeHostMessage(message: HostMessage): string;
  /**
   * A run's frame as UTF-8, the same JSON `encodeHostMessage` writes (its modules last): each
   * frozen module's bytes are encoded once, so a run that carries a shared set costs a copy of them, not a re-encoding.
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
   * A frozen module's frame bytes (its JSON text as UTF-8), by the module: a set from
   * bundlePackages is passed on every call, and escaping and encoding its hundreds of KiB again
   * for each run was most of what carrying it cost the host.
   */
  const moduleBytes = new WeakMap<object, Uint8Array>();
  const utf8 = new TextEncoder();

  const isString = (value: unknown) => typeof value === 'string';

  function moduleFrameBytes(source: ModuleSource): Uint8Array {
    // A `{json}` module's value may be an object that changes under a frozen module: never kept.
    const kept = typeof source === 'object' && Object.isFrozen(source) && Object.values(source).every(isString);
    if (!kept) return utf8.encode(JSON.stringify(source));
    let bytes = moduleBytes.get(source);
    if (bytes === undefined) moduleBytes.set(source, (bytes = utf8.encode(JSON.stringify(source))));
    return bytes;
  }

  /** A run's JSON as UTF-8, its modules' bytes spliced in after its other fields. */
  function encodeRunFrame(message: RunMessage): Uint8Array {
    const { modules, ...rest } = message;
    const head = JSON.stringify(rest);
    const parts: Uint8Array[] = [utf8.encode(`${head.slice(0, -1)},"modules":{`)];
    let separator = '';
    for (const [name, source] of Object.entries(modules)) {
      parts.push(utf8.encode(`${separator}${JSON.stringify(name)}:`), moduleFrameBytes(source));
      separator = ',';
    }
    parts.push(utf8.encode('}}'));
    const frame = new Uint8Array(parts.reduce((size, part) => size + part.byteLength, 0));
    let at = 0;
    for (const part of parts) {
      frame.set(part, at);
      at += part.byteLength;
    }
    return frame;
  }

  function encodeHostMessage(message: HostMessage): string {
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

  function modulesOf(value: unknown): Record<string, ModuleSource> | null {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
    const modules: Record<string, ModuleSource> = {};
    for (const [name, source] of Object.entries(value)) {
      const module = moduleOf(source);
      if (module === null) return null;
      modules[name] = module;
    }
    return modules;
  }

  function parseHostMessage(text: string): HostMessage | null {
    if (text.startsWith(ANSWER_TAG)) return parseAnswer(text);
    const fields = fieldsOf(text);
    if (fields === null) return null;
    switch (fields.get('t')) {
      case 'run': {
        const run = string(fields, 'run');
        const entry = string(fields, 'entry');
        const modules = modulesOf(fields.get('modules'));
        const outbound = boolean(fields, 'outbound');
        const retain = boolean(fields, 'retain');
        const bound = milliseconds(fields, 'bound');
        if (run === null || entry === null || modules === null || outbound === null || retain === null) return null;
        if (bound === null) return null;
        const live = fields.get('live');
        if (live !== undefined && typeof live !== 'boolean') return null;
        return { t: 'run', run, entry, modules, outbound, retain, bound, ...(live === true ? { live } : {}) };
      }
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
