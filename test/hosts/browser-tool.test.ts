/**
 * Upstream's `createBrowserCodeTool` (`@cloudflare/codemode/browser`) with our executor in place
 * of its iframe sandbox. It returns a plain JSON Schema tool descriptor, the shape a browser hands
 * to `navigator.modelContext.registerTool()`; the test is the client that registry would be: it
 * reads what the model is shown and calls `execute` as the model's tool call would.
 */
import '../../src/register/index.js';
import { createBrowserCodeTool } from '@cloudflare/codemode/browser';
import { beforeAll, expect, it } from 'vitest';
import {
  FAILING_ERROR,
  FAILING_LOGS,
  FAILING_PROGRAM,
  LISTING_LOGS,
  LISTING_PROGRAM,
  LISTING_RESULT,
  listIssues,
  TOOL_DESCRIPTION,
  TOOL_IDENTIFIER,
  TOOL_NAME,
  UNKNOWN_TOOL_ERROR,
  UNKNOWN_TOOL_PROGRAM,
} from './support/issues.js';
import { describeOnBothExecutors } from './support/on-both-executors.js';

const hostTools: Parameters<typeof createBrowserCodeTool>[0]['tools'] = {
  [TOOL_NAME]: {
    description: TOOL_DESCRIPTION,
    inputSchema: { type: 'object', properties: { repo: { type: 'string' } }, required: ['repo'] },
    execute: async (input: unknown) => listIssues(input as { repo: string }),
  },
};

describeOnBothExecutors('createBrowserCodeTool', (executor) => {
  let codeTool: ReturnType<typeof createBrowserCodeTool>;

  beforeAll(() => {
    codeTool = createBrowserCodeTool({ tools: hostTools, executor: executor() });
  });

  it('describes one code tool to the model, naming the identifier the sandbox binds', () => {
    expect(codeTool.name).toBe('codemode');
    expect(codeTool.inputSchema).toMatchObject({ required: ['code'] });
    expect(codeTool.description).toContain(
      `\t${TOOL_IDENTIFIER}: (input: ListIssuesInput) => Promise<ListIssuesOutput>;`,
    );
  });

  it('answers a program with the value it computed and its log lines', async () => {
    expect(await codeTool.execute({ code: LISTING_PROGRAM })).toEqual({ result: LISTING_RESULT, logs: LISTING_LOGS });
  });

  it('answers a program that throws with a failure carrying its message and console output', async () => {
    await expect(codeTool.execute({ code: FAILING_PROGRAM })).rejects.toThrow(
      new Error(`Code execution failed: ${FAILING_ERROR}\n\nConsole output:\n${FAILING_LOGS.join('\n')}`),
    );
  });

  it('answers a call to a tool the host never declared with the dialect text', async () => {
    await expect(codeTool.execute({ code: UNKNOWN_TOOL_PROGRAM })).rejects.toThrow(
      new Error(`Code execution failed: ${UNKNOWN_TOOL_ERROR}`),
    );
  });
});
