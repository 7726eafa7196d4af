/**
 * The events workerd writes on its control fd (`--control-fd`), one JSON object a line: each
 * socket it bound, with the port the kernel gave it, and the inspector's port when one is
 * enabled. These are every event the pinned workerd writes.
 */

/**
 * A socket of the config is listening (`port` is the one bound for an address ending in `:0`, and
 * 0 for a `unix:` address).
 */
interface ListenEvent {
  event: 'listen';
  socket: string;
  port: number;
}

/** The inspector (`--inspector-addr`) is listening. */
interface ListenInspectorEvent {
  event: 'listen-inspector';
  port: number;
}

export type ControlEvent = ListenEvent | ListenInspectorEvent;

function portOf(value: unknown, unixAllowed: boolean): number | null {
  const min = unixAllowed ? 0 : 1;
  return typeof value === 'number' && Number.isInteger(value) && value >= min && value < 65536 ? value : null;
}

/** One control-fd line, or `null` for a line outside the grammar. */
export function parseControlEvent(line: string): ControlEvent | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    return null;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return null;
  const fields = new Map<string, unknown>(Object.entries(parsed));
  const event = fields.get('event');
  const port = portOf(fields.get('port'), event === 'listen');
  if (port === null) return null;
  if (event === 'listen-inspector') return { event, port };
  const socket = fields.get('socket');
  if (event === 'listen' && typeof socket === 'string') return { event, socket, port };
  return null;
}
