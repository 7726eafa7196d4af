/**
 * Upstream's `createCodeTool` (`@cloudflare/codemode/ai`) in a Node host, driven by the AI SDK's
 * own `generateText` and its mock language model: the model calls the code tool, the SDK runs
 * it on our executor, and the next model call carries the tool result, as a real model would
 * receive it.
 */
import '../../src/register/index.js';
import { createCodeTool } from '@cloudflare/codemode/ai';
import { generateText, stepCountIs, tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { expect, it } from 'vitest';
import { z } from 'zod';
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

const hostTools = {
  [TOOL_NAME]: tool({
    description: TOOL_DESCRIPTION,
    inputSchema: z.object({ repo: z.string() }),
    execute: async (input) => listIssues(input),
  }),
};

const USAGE = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

/** A model that first calls the code tool with `code`, then answers in text. */
function modelWriting(code: string): MockLanguageModelV3 {
  let calls = 0;
  return new MockLanguageModelV3({
    doGenerate: async () => {
      calls += 1;
      if (calls === 1) {
        return {
          content: [{ type: 'tool-call', toolCallId: 'call-1', toolName: 'codemode', input: JSON.stringify({ code }) }],
          finishReason: { unified: 'tool-calls', raw: undefined },
          usage: USAGE,
          warnings: [],
        };
      }
      return {
        content: [{ type: 'text', text: 'done' }],
        finishReason: { unified: 'stop', raw: undefined },
        usage: USAGE,
        warnings: [],
      };
    },
  });
}

describeOnBothExecutors('createCodeTool with the AI SDK', (executor) => {
  /** Runs one conversation; returns what the model received on each of its two calls. */
  async function converse(code: string) {
    const model = modelWriting(code);
    const codemode = createCodeTool({ tools: hostTools, executor: executor() });
    const { text } = await generateText({
      model,
      tools: { codemode },
      prompt: 'List the issues',
      stopWhen: stepCountIs(2),
    });
    expect(text).toBe('done');
    expect(model.doGenerateCalls).toHaveLength(2);
    const [first, second] = model.doGenerateCalls;
    return { first: first!, second: second! };
  }

  /** The tool result part of the model's second call. */
  function toolResult(prompt: Awaited<ReturnType<typeof converse>>['second']['prompt']) {
    const message = prompt.at(-1);
    expect(message?.role).toBe('tool');
    const part = message?.role === 'tool' ? message.content[0] : undefined;
    expect(part?.type).toBe('tool-result');
    return part?.type === 'tool-result' ? part.output : undefined;
  }

  it('shows the model one code tool whose description names the identifier the sandbox binds', async () => {
    const { first } = await converse(LISTING_PROGRAM);
    expect(first.tools?.map((offered) => offered.name)).toEqual(['codemode']);
    const offered = first.tools?.[0];
    expect(offered?.type === 'function' ? offered.description : undefined).toContain(
      `\t${TOOL_IDENTIFIER}: (input: ListIssuesInput) => Promise<ListIssuesOutput>;`,
    );
  });

  it('hands the model the value the program computed and its log lines', async () => {
    const { second } = await converse(LISTING_PROGRAM);
    expect(toolResult(second.prompt)).toEqual({
      type: 'json',
      value: { result: LISTING_RESULT, logs: LISTING_LOGS },
    });
  });

  it('hands the model the failure of a program that throws, with its console output', async () => {
    const { second } = await converse(FAILING_PROGRAM);
    expect(toolResult(second.prompt)).toEqual({
      type: 'error-text',
      value: `Code execution failed: ${FAILING_ERROR}\n\nConsole output:\n${FAILING_LOGS.join('\n')}`,
    });
  });

  it('hands the model the dialect text for a tool the host never declared', async () => {
    const { second } = await converse(UNKNOWN_TOOL_PROGRAM);
    expect(toolResult(second.prompt)).toEqual({
      type: 'error-text',
      value: `Code execution failed: ${UNKNOWN_TOOL_ERROR}`,
    });
  });
});
