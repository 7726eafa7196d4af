/**
 * The TanStack adapter (src/events/tanstack.ts) against TanStack AI code mode itself: the stream
 * TanStack's own `execute_typescript` tool emits for a run (driven through a stand-in isolate
 * driver, so its real event code runs) and the stream our adapter emits for the same program on
 * IsolateExecutor have the same event names, and each event the same fields, but where ours carries
 * a size in place of a value (`args` → `argsBytes`, `result` → `resultBytes`). TanStack's own types
 * take the adapter (the type-level half).
 */
import { toolDefinition } from '@tanstack/ai';
import {
  type CodeModeTool,
  createCodeModeTool,
  type IsolateDriver,
  type ToolExecutionContext,
} from '@tanstack/ai-code-mode';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { CodemodeExecutor } from '../../src/codemode/codemode-executor.js';
import { type TanStackEmit, tanStackCodeModeEvents } from '../../src/events/tanstack.js';
import { IsolateExecutor } from '../../src/isolate/index.js';

type Emitted = [name: string, value: Record<string, unknown>];

let isolate: IsolateExecutor;

beforeAll(() => {
  isolate = new IsolateExecutor({ pool: { maxWorkers: 1, spare: 0 } });
});

afterAll(async () => {
  await isolate?.dispose();
});

const getWeather = async ({ city }: { city: string }) => ({ city, celsius: 12 });
const dropTable = async (_args: { table: string }): Promise<never> => {
  throw new Error('drop is not allowed');
};

/** What TanStack's own code mode tool emits for a run that calls both tools and logs two lines. */
async function tanStackStream(): Promise<Emitted[]> {
  const tools = [
    toolDefinition({ name: 'getWeather', description: 'weather', inputSchema: z.object({ city: z.string() }) }).server(
      getWeather,
    ),
    toolDefinition({ name: 'dropTable', description: 'drop', inputSchema: z.object({ table: z.string() }) }).server(
      dropTable,
    ),
  ];
  // The driver stands in for an isolate: it makes the calls the program would, through the
  // event-aware bindings TanStack hands it, and returns the program's console lines.
  const driver: IsolateDriver = {
    createContext: async ({ bindings }) => ({
      execute: async <T>() => {
        await bindings.external_getWeather?.execute({ city: 'Oslo' });
        await bindings.external_dropTable?.execute({ table: 'users' }).catch(() => undefined);
        return { success: true, value: 12 as T, logs: ['asking', 'WARN: got 12'] };
      },
      dispose: async () => {},
    }),
  };
  const emitted: Emitted[] = [];
  // ai-code-mode 0.3.4 was typed against @tanstack/ai 0.39; this project has 0.58, whose ServerTool
  // gained type parameters. The tools are the same at run time.
  const tool = createCodeModeTool({ driver, tools: tools as unknown as CodeModeTool[] });
  const context = { emitCustomEvent: (name: string, value: Record<string, unknown>) => emitted.push([name, value]) };
  await (tool.execute as (input: unknown, context: unknown) => Promise<unknown>)(
    { typescriptCode: 'const x = 1' },
    context,
  );
  return emitted;
}

/** What our adapter emits for the same program on IsolateExecutor. */
async function ourStream(): Promise<Emitted[]> {
  const emitted: Emitted[] = [];
  const code =
    'console.log("asking")\nconst w = await external.getWeather({ city: "Oslo" })\ntry { await external.dropTable({ table: "users" }) } catch {}\nconsole.warn("got", w.celsius)\nw.celsius';
  const onEvent = tanStackCodeModeEvents((name, value) => emitted.push([name, value]), code);
  const result = await new CodemodeExecutor(isolate).execute(
    code,
    [{ name: 'external', fns: { getWeather, dropTable } }],
    { onEvent },
  );
  expect(result.result).toBe(12);
  return emitted;
}

/** Each event's name with its field names, in a stable order. */
function fieldsByName(stream: Emitted[]): string[] {
  return stream.map(([name, value]) => `${name}: ${Object.keys(value).sort().join(',')}`).sort();
}

describe('the TanStack adapter', () => {
  it("emits TanStack's event names with TanStack's fields, sizes standing in for values", async () => {
    const theirs = await tanStackStream();
    const ours = await ourStream();
    const asSizes = (line: string) => line.replace(/\bargs\b/, 'argsBytes').replace(/\bresult\b/, 'resultBytes');
    const sortedFields = (line: string) => {
      const [name, fields = ''] = line.split(': ');
      return `${name}: ${fields.split(',').map(asSizes).sort().join(',')}`;
    };
    expect(fieldsByName(ours)).toEqual(fieldsByName(theirs).map(sortedFields).sort());
    expect(ours.map(([name]) => name)).toEqual([
      'code_mode:execution_started',
      'code_mode:console',
      'code_mode:external_call',
      'code_mode:external_result',
      'code_mode:external_call',
      'code_mode:external_error',
      'code_mode:console',
    ]);
    const byName = new Map(ours.map(([name, value]) => [name, value]));
    expect(byName.get('code_mode:external_error')).toMatchObject({
      function: 'external.dropTable',
      error: 'drop is not allowed',
    });
    expect(byName.get('code_mode:console')).toMatchObject({ level: 'warn', message: 'got 12' });
    // TanStack's console events carry the same level and message for the same lines.
    const consoleOf = (stream: Emitted[]) =>
      stream.filter(([name]) => name === 'code_mode:console').map(([, { level, message }]) => ({ level, message }));
    expect(consoleOf(ours)).toEqual(consoleOf(theirs));
  }, 60_000);

  it("takes TanStack's emitCustomEvent as it is typed", () => {
    expectTypeOf<ToolExecutionContext['emitCustomEvent']>().toExtend<TanStackEmit>();
  });
});
