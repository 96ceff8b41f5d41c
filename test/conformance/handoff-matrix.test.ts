/**
 * Cross-provider handoff, every ordered pair of wire APIs: a conversation whose tool call
 * was decoded from a real recording of the first provider, plus a result for every call,
 * is continued on the second. A local server records the request the second adapter
 * sends (and answers with a valid response of its API); the request must obey the second
 * API's rules (wire-rules.ts): tool ids in the accepted form and consistent between call
 * and result, every call answered, no foreign signatures, valid roles.
 *
 * Written against the adapters' public StreamFunctions only.
 */
import { describe, expect, it } from 'vitest';
import { loadAdapter } from '../../src/model/providers/index.js';
import type { AssistantMessage, Context, Message, ModelApi, ToolCall } from '../../src/model/types.js';
import { startServer } from '../model/fixture-server.js';
import { collect } from '../model/stream-helpers.js';
import { modelRef, recordedResponse, replayRecording } from './recordings.js';
import { checkRequest } from './wire-rules.js';

/** Where a conversation starts: a tool-call recording of one API, and the model that made it. */
interface Source {
  api: ModelApi;
  file: string;
  id: string;
}

/** The tool-call recordings, one or two per API; the first of each is also the target model. */
const SOURCES: Source[] = [
  { api: 'openai-chat', file: 'openai-chat/stream-parallel-tool-calls.sse', id: 'gpt-4o' },
  { api: 'openai-responses', file: 'openai-responses/stream-reasoning-function-call.sse', id: 'gpt-5' },
  { api: 'openai-responses', file: 'openai-responses/stream-function-call.sse', id: 'gpt-4o' },
  { api: 'anthropic-messages', file: 'anthropic/stream-thinking-tool-use.sse', id: 'claude-haiku-4-5' },
  { api: 'anthropic-messages', file: 'anthropic/stream-tool-use.sse', id: 'claude-3-5-haiku-latest' },
  { api: 'gemini', file: 'gemini/stream-function-call-thought-signature.sse', id: 'gemini-3-pro-preview' },
  { api: 'gemini', file: 'gemini/stream-parallel-function-calls.sse', id: 'gemini-2.0-flash' },
];

/** The model each API is continued on, and a valid answer of that API to send back. */
const TARGETS: Record<ModelApi, { id: string; answer: string }> = {
  'openai-chat': { id: 'gpt-4o', answer: 'openai-chat/stream-text-usage.sse' },
  'openai-responses': { id: 'gpt-5', answer: 'openai-responses/stream-text-single-delta.sse' },
  'anthropic-messages': { id: 'claude-haiku-4-5', answer: 'anthropic/stream-text.sse' },
  gemini: { id: 'gemini-3-pro-preview', answer: 'gemini/stream-function-call-turn2-text.sse' },
};

const APIS: ModelApi[] = ['openai-chat', 'openai-responses', 'anthropic-messages', 'gemini'];

/** The source recording decoded by its own adapter: the assistant turn to hand off. */
async function decodeSource(source: Source): Promise<AssistantMessage> {
  const { message } = await replayRecording(source.file, { id: source.id });
  if (message.stopReason === 'error')
    throw new Error(`the ${source.api} adapter could not decode ${source.file}: ${message.error?.code}: ${message.error?.message}`);
  if (!message.content.some((block) => block.type === 'tool_call')) throw new Error(`${source.file} decoded to no tool call`);
  return message;
}

/** The conversation: a question, the decoded turn, and a result for every call in order. */
function conversation(turn: AssistantMessage): Context {
  const calls = turn.content.filter((block): block is ToolCall => block.type === 'tool_call');
  const results: Message[] = calls.map((call) => ({
    role: 'tool',
    toolCallId: call.id,
    toolName: call.name,
    content: [{ type: 'text', text: `the result of ${call.name}` }],
    isError: false,
  }));
  const tools = [...new Set(calls.map((call) => call.name))].map((name) => ({
    name,
    description: `the ${name} tool of the recording`,
    parameters: { type: 'object', properties: {} },
  }));
  return { system: 'Answer briefly.', messages: [{ role: 'user', content: 'Use the tools, then answer.' }, turn, ...results], tools };
}

describe('handoff matrix: a tool-call conversation of one API continued on another', () => {
  for (const source of SOURCES) {
    for (const target of APIS) {
      const { id: targetId, answer } = TARGETS[target];
      const own = source.api === target && source.id === targetId;
      it(`${source.api} (${source.file.split('/')[1]}) → ${target}${own ? ' (same model)' : ''}`, async () => {
        const turn = await decodeSource(source);
        const server = await startServer([recordedResponse(answer)]);
        try {
          const { message } = await collect((await loadAdapter(target))(modelRef(target, targetId, server.baseUrl), conversation(turn)));
          const request = server.requests[0];
          if (request === undefined)
            throw new Error(`the ${target} adapter sent no request: ${message.error?.code}: ${message.error?.message}`);
          const problems = checkRequest(target, request.json, { source: turn, own, targetId });
          expect(problems, problems.join('; ')).toEqual([]);
        } finally {
          await server.close();
        }
      });
    }
  }
});
