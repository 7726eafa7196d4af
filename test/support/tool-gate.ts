/**
 * Runs that each hold a tool call until the test opens the gate: the shape the pool tests use to
 * keep members busy (a program waiting on its tools, as agent programs mostly are).
 */
import { createEnvelopeDispatch } from '../../src/protocol/dispatch.js';

export function toolGate() {
  let open: () => void = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  let waiting = 0;
  const dispatch = createEnvelopeDispatch(
    {
      gate: async () => {
        waiting += 1;
        await opened;
        return 'through';
      },
    },
    { active: true },
  );
  const providers = [{ name: 'gate', tools: ['pass'] }];
  const request = { code: 'async () => gate.pass()', providers, dispatch };
  return { dispatch, providers, request, open, waiting: () => waiting };
}
