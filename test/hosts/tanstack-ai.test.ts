/**
 * Upstream's `createCodeTool` from `@cloudflare/codemode/tanstack-ai` in a Node host, driven by
 * TanStack AI's own `chat()` loop. TanStack ships no mock model, so the model is a text adapter
 * that replays two turns (a call of the code tool, then an answer) in the AG-UI events adapters
 * stream, and records what `chat()` sends it on each turn.
 */
import '../../src/register/index.js';
import { createCodeTool, tanstackTools } from '@cloudflare/codemode/tanstack-ai';
import { type AnyTextAdapter, chat, EventType, type TextOptions, toolDefinition } from '@tanstack/ai';
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

const listIssuesTool = toolDefinition({
  name: TOOL_NAME,
  description: TOOL_DESCRIPTION,
  inputSchema: z.object({ repo: z.string() }),
  outputSchema: z.array(z.object({ repo: z.string(), number: z.number(), title: z.string() })),
}).server(async (input) => listIssues(input));

/** The name upstream gives the code tool. */
const CODE_TOOL = 'codemode_execute';

/** A model that first calls the code tool with `code`, then answers in text; `turns` records what it was sent. */
function modelWriting(code: string): { adapter: AnyTextAdapter; turns: TextOptions<Record<string, never>>[] } {
  const turns: TextOptions<Record<string, never>>[] = [];
  const adapter: AnyTextAdapter = {
    kind: 'text',
    name: 'replay',
    model: 'replay',
    // Type-only: TanStack's adapters never assign it at run time.
    '~types': undefined as never,
    async *chatStream(options) {
      turns.push(options);
      const runId = `run-${turns.length}`;
      const threadId = 'thread';
      const timestamp = Date.now();
      yield { type: EventType.RUN_STARTED, runId, threadId, timestamp };
      if (turns.length === 1) {
        yield { type: EventType.TOOL_CALL_START, toolCallId: 'call-1', toolCallName: CODE_TOOL, timestamp };
        yield { type: EventType.TOOL_CALL_ARGS, toolCallId: 'call-1', delta: JSON.stringify({ code }), timestamp };
        yield { type: EventType.TOOL_CALL_END, toolCallId: 'call-1', timestamp };
        yield { type: EventType.RUN_FINISHED, runId, threadId, finishReason: 'tool_calls', timestamp };
      } else {
        yield { type: EventType.TEXT_MESSAGE_START, messageId: 'answer', role: 'assistant', timestamp };
        yield { type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'answer', delta: 'done', timestamp };
        yield { type: EventType.TEXT_MESSAGE_END, messageId: 'answer', timestamp };
        yield { type: EventType.RUN_FINISHED, runId, threadId, finishReason: 'stop', timestamp };
      }
    },
    structuredOutput: () => Promise.reject(new Error('This replay model answers no structured output')),
  };
  return { adapter, turns };
}

describeOnBothExecutors('createCodeTool with TanStack AI', (executor) => {
  /** Runs one conversation; returns what the model was sent on each of its two turns. */
  async function converse(code: string) {
    const { adapter, turns } = modelWriting(code);
    const codeTool = createCodeTool({ tools: [tanstackTools([listIssuesTool])], executor: executor() });
    const text = await chat({
      adapter,
      messages: [{ role: 'user', content: 'List the issues' }],
      tools: [codeTool],
      stream: false,
    });
    expect(text).toBe('done');
    expect(turns).toHaveLength(2);
    return { first: turns[0]!, second: turns[1]! };
  }

  /** The content of the tool message on the model's second turn. */
  function toolMessage(turn: TextOptions<Record<string, never>>) {
    const message = turn.messages.at(-1);
    expect(message).toMatchObject({ role: 'tool', toolCallId: 'call-1' });
    return message?.content;
  }

  it('shows the model one code tool whose description names the identifier the sandbox binds', async () => {
    const { first } = await converse(LISTING_PROGRAM);
    expect(first.tools?.map((offered) => offered.name)).toEqual([CODE_TOOL]);
    expect(first.tools?.[0]?.description).toContain(
      `\t${TOOL_IDENTIFIER}: (input: ListIssuesInput) => Promise<ListIssuesOutput>;`,
    );
  });

  it('hands the model the value the program computed and its log lines', async () => {
    const { second } = await converse(LISTING_PROGRAM);
    expect(JSON.parse(String(toolMessage(second)))).toEqual({ result: LISTING_RESULT, logs: LISTING_LOGS });
  });

  it('hands the model the failure of a program that throws, with its console output', async () => {
    const { second } = await converse(FAILING_PROGRAM);
    expect(JSON.parse(String(toolMessage(second)))).toEqual({
      error: `Code execution failed: ${FAILING_ERROR}\n\nConsole output:\n${FAILING_LOGS.join('\n')}`,
    });
  });

  it('hands the model the dialect text for a tool the host never declared', async () => {
    const { second } = await converse(UNKNOWN_TOOL_PROGRAM);
    expect(JSON.parse(String(toolMessage(second)))).toEqual({ error: `Code execution failed: ${UNKNOWN_TOOL_ERROR}` });
  });
});
