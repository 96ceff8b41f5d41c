/**
 * Every OpenAI Responses recording in ../shared/fixtures (openai-responses/, LM Studio's
 * Responses stream in openai-compatible/, and the Responses items of
 * errors/observed-in-issue-reports.json), replayed by a real local HTTP server, decodes to
 * the right events and final message, or to the right typed error. Expected values are
 * read from the recordings or copied from them.
 */
import { readdirSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { adapters, loadAdapter } from '../../src/model/providers/index.js';
import { streamOpenAIResponses } from '../../src/model/providers/openai-responses.js';
import type { AssistantMessage, AssistantStreamEvent, Context, Message, ModelRef, ThinkingContent } from '../../src/model/types.js';
import { FIXTURES_DIR, fixtureResponse, readFixture, startServer } from './fixture-server.js';
import type { ScriptedResponse, TestServer } from './fixture-server.js';
import { collect, expectWellFormed, testModel, textOf, thinkingOf, toolCallsOf } from './stream-helpers.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

type Json = Record<string, unknown>;

function responsesModel(baseUrl: string, overrides: Partial<ModelRef> = {}): ModelRef {
  return testModel(baseUrl, { provider: 'openai-responses', api: 'openai-responses', id: 'gpt-5', ...overrides });
}

/** The payloads of a recording, in order (`data:` lines of an .sse, lines of a .chunks.jsonl). */
function recordedEvents(file: string): Json[] {
  const text = readFixture(file);
  const lines = file.endsWith('.jsonl')
    ? text.split('\n')
    : text.split('\n').flatMap((line) => (line.startsWith('data:') ? [line.slice(5)] : []));
  return lines.filter((line) => line.trim() !== '').map((line) => JSON.parse(line) as Json);
}

/** Payload-only events framed as the Responses API sends them: `event: <type>` then `data:`. */
function framed(events: Json[]): string {
  return events.map((event) => `event: ${String(event.type)}\ndata: ${JSON.stringify(event)}\n\n`).join('');
}

/** The recorded response; `.chunks.jsonl` recordings get their `event:` lines back. */
function responsesFixture(file: string): ScriptedResponse {
  const recorded = fixtureResponse(file);
  return file.endsWith('.chunks.jsonl') ? { ...recorded, body: framed(recordedEvents(file)) } : recorded;
}

/** The item of the recorded `response.output_item.done` with this item type (the n-th one). */
function doneItem(events: Json[], type: string, nth = 0): Json {
  const items = events
    .filter((e) => e.type === 'response.output_item.done')
    .map((e) => e.item as Json)
    .filter((item) => item.type === type);
  const item = items[nth];
  if (item === undefined) throw new Error(`no ${type} item #${nth} in the recording`);
  return item;
}

async function replay(
  file: string,
  options: { stream?: boolean; model?: Partial<ModelRef>; response?: ScriptedResponse; context?: Context } = {},
): Promise<{ events: AssistantStreamEvent[]; message: AssistantMessage }> {
  server = await startServer([options.response ?? responsesFixture(file)]);
  const context = options.context ?? { messages: [{ role: 'user', content: 'hi' }] };
  const result = await collect(streamOpenAIResponses(responsesModel(server.baseUrl, options.model), context, { stream: options.stream }));
  expectWellFormed(result.events, result.message);
  expect(server.requests).toHaveLength(1);
  expect(server.requests[0]?.url).toBe('/v1/responses');
  return result;
}

function errorOf(events: AssistantStreamEvent[]): Extract<AssistantStreamEvent, { type: 'error' }>['error'] {
  const last = events[events.length - 1];
  if (last?.type !== 'error') throw new Error(`expected an error event, got ${last?.type}`);
  return last.error;
}

const TESTED: string[] = [];
/** Registers a test that replays `file` (the guard below checks every recording has one). */
function recording(file: string, name: string, body: () => Promise<void>): void {
  TESTED.push(file);
  it(`${file}: ${name}`, body);
}

describe('openai-responses recordings', () => {
  it('covers every Responses fixture (a new recording needs a test here)', () => {
    const responses = readdirSync(new URL('openai-responses/', FIXTURES_DIR))
      .filter((name) => /\.(sse|json|txt|jsonl)$/.test(name))
      .map((name) => `openai-responses/${name}`);
    const lmstudio = readdirSync(new URL('openai-compatible/', FIXTURES_DIR))
      .filter((name) => name.includes('-responses-'))
      .map((name) => `openai-compatible/${name}`);
    const covered = new Set(TESTED);
    expect(responses.length).toBeGreaterThan(10);
    expect([...responses, ...lmstudio].filter((file) => !covered.has(file))).toEqual([]);
  });

  it('is the adapter registered for the openai-responses API, loaded on first use', async () => {
    expect(await loadAdapter('openai-responses')).toBe(streamOpenAIResponses);
    expect(adapters['openai-responses']).toBe(streamOpenAIResponses);
  });

  recording('openai-responses/stream-text-single-delta.sse', 'one text delta; message id and phase kept in the signature', async () => {
    const { message, events } = await replay('openai-responses/stream-text-single-delta.sse', { model: { id: 'gpt-5.5' } });
    expect(events.map((e) => e.type)).toEqual(['start', 'text_start', 'text_delta', 'text_end', 'done']);
    expect(message.content).toEqual([
      {
        type: 'text',
        text: 'pong',
        signature: JSON.stringify({ id: 'msg_00592e63e61b66660169fab1bada8481a28ef92eb62c168ead', phase: 'final_answer' }),
      },
    ]);
    expect(message).toMatchObject({ stopReason: 'stop', api: 'openai-responses', provider: 'openai-responses', model: 'gpt-5.5' });
    expect(message.responseId).toBe('resp_00592e63e61b66660169fab1b9f8e481a2b321356198d7ac1b');
    expect(message.usage).toEqual({ input: 11, output: 5, cacheRead: 0, cacheWrite: 0, reasoning: 0, total: 16 });
  });

  recording(
    'openai-responses/stream-text-reasoning-item.sse',
    'an empty reasoning item (no summary, no encrypted content) leaves no block; reasoning tokens counted',
    async () => {
      const { message, events } = await replay('openai-responses/stream-text-reasoning-item.sse', { model: { id: 'gpt-5-mini' } });
      expect(message.content.map((b) => b.type)).toEqual(['text']);
      expect(textOf(message)).toBe('Hi! How can I help you today?');
      expect(events.filter((e) => e.type === 'text_delta')).toHaveLength(9);
      expect(message.usage).toEqual({ input: 7, output: 79, cacheRead: 0, cacheWrite: 0, reasoning: 64, total: 86 });
      expect(message.stopReason).toBe('stop');
    },
  );

  recording('openai-responses/stream-reasoning-summary.sse', 'reasoning summary deltas become thinking, then the answer', async () => {
    const file = 'openai-responses/stream-reasoning-summary.sse';
    const recorded = recordedEvents(file);
    const { message, events } = await replay(file, { model: { id: 'o4-mini' } });
    const reasoning = doneItem(recorded, 'reasoning');
    const summary = (reasoning.summary as Json[])[0]?.text;
    expect(summary).toMatch(/^\*\*Calculating addition\*\*/);
    expect(message.content.map((b) => b.type)).toEqual(['thinking', 'text']);
    expect(thinkingOf(message)).toBe(summary);
    const thinking = message.content[0] as ThinkingContent;
    expect(thinking.signature).toBe(JSON.stringify(reasoning));
    expect(thinking.redacted).toBeUndefined(); // readable summary, no encrypted content
    expect(events.filter((e) => e.type === 'thinking_delta')).toHaveLength(
      recorded.filter((e) => e.type === 'response.reasoning_summary_text.delta').length,
    );
    expect(textOf(message)).toBe('2 + 2 = 4.');
    expect(message.usage).toEqual({ input: 14, output: 14, cacheRead: 0, cacheWrite: 0, reasoning: 0, total: 28 });
  });

  recording('openai-responses/stream-function-call.sse', 'one function call with argument deltas', async () => {
    const { message, events } = await replay('openai-responses/stream-function-call.sse', { model: { id: 'gpt-4o' } });
    expect(toolCallsOf(message)).toEqual([
      {
        type: 'tool_call',
        id: 'call_kL0PCQV7M2WMoVX8V8OtYSAL',
        name: 'get_capital',
        arguments: { country: 'France' },
        rawArguments: '{"country":"France"}',
        signature: 'fc_67e554a1de488191af0831d35cbe082e0794405d35281ae2',
      },
    ]);
    expect(events.filter((e) => e.type === 'tool_call_delta')).toHaveLength(5);
    const snapshots = events.flatMap((e) => (e.type === 'tool_call_delta' ? [JSON.stringify(e.partialArguments)] : []));
    expect(snapshots).toEqual(['{}', '{}', '{"country":""}', '{"country":"France"}', '{"country":"France"}']);
    expect(message.stopReason).toBe('tool_use');
    expect(message.usage).toEqual({ input: 255, output: 16, cacheRead: 0, cacheWrite: 0, reasoning: 0, total: 271 });
  });

  recording('openai-responses/stream-function-call-turn2-text.sse', 'text after the function call output (turn 2)', async () => {
    const { message } = await replay('openai-responses/stream-function-call-turn2-text.sse', { model: { id: 'gpt-4o' } });
    expect(textOf(message)).toBe('The capital of France is Paris.');
    expect(message.stopReason).toBe('stop');
    expect(message.usage).toMatchObject({ input: 278, output: 9, total: 287 });
  });

  recording(
    'openai-responses/stream-reasoning-function-call.sse',
    'encrypted reasoning without summary is a redacted block kept whole; then the call',
    async () => {
      const file = 'openai-responses/stream-reasoning-function-call.sse';
      const { message, events } = await replay(file);
      const reasoning = doneItem(recordedEvents(file), 'reasoning');
      expect(typeof reasoning.encrypted_content).toBe('string');
      expect(message.content[0]).toEqual({ type: 'thinking', thinking: '', signature: JSON.stringify(reasoning), redacted: true });
      expect(events.slice(1, 3).map((e) => e.type)).toEqual(['thinking_start', 'thinking_end']);
      const [call] = toolCallsOf(message);
      expect(call).toMatchObject({
        id: 'call_CWXgs68YprAjp6t0371hiPOI',
        name: 'final_result',
        arguments: { result: 6666 },
        signature: 'fc_0050471a34b36ae60068c97bf19d9c819590eaf42c0edc1042',
      });
      expect(message.stopReason).toBe('tool_use');
      expect(message.usage).toEqual({ input: 53, output: 469, cacheRead: 0, cacheWrite: 0, reasoning: 448, total: 522 });
    },
  );

  recording('openai-responses/stream-refusal.sse', 'a refusal part sets message.refusal and stopReason refusal', async () => {
    const { message } = await replay('openai-responses/stream-refusal.sse', { model: { id: 'gpt-4o' } });
    expect(message.refusal).toBe("I'm sorry, I can't assist with that.");
    expect(message.content).toEqual([]);
    expect(message.stopReason).toBe('refusal');
    expect(message.usage).toMatchObject({ input: 54, output: 11, total: 65 });
  });

  recording(
    'openai-responses/stream-incomplete-max-output-tokens.sse',
    'response.incomplete (max_output_tokens) is stopReason length, not an error',
    async () => {
      const { message, events } = await replay('openai-responses/stream-incomplete-max-output-tokens.sse', { model: { id: 'gpt-5-mini' } });
      expect(events.map((e) => e.type)).toEqual(['start', 'done']);
      expect(message.content).toEqual([]);
      expect(message.stopReason).toBe('length');
      expect(message.responseId).toBe('resp_0171ee5ab776926800697d48e5ee74819e87beaccc067203ae');
      expect(message.usage).toEqual({ input: 13, output: 0, cacheRead: 0, cacheWrite: 0, reasoning: 0, total: 13 });
    },
  );

  recording(
    'openai-responses/stream-error-insufficient-quota.chunks.jsonl',
    'an error event mid-stream (insufficient_quota) is fatal rate_limited',
    async () => {
      const { message, events } = await replay('openai-responses/stream-error-insufficient-quota.chunks.jsonl', {
        model: { id: 'gpt-5-nano' },
      });
      const error = errorOf(events);
      expect(events.map((e) => e.type)).toEqual(['start', 'error']);
      expect([error.code, error.kind, error.status]).toEqual(['rate_limited', 'fatal', undefined]);
      expect(error.message).toContain('You exceeded your current quota, please check your plan and billing details.');
      expect(message.stopReason).toBe('error');
      expect(message.error?.code).toBe('rate_limited');
      expect(message.responseId).toBe('resp_05500b38c2cd9bfc00691c7c9d222481a3b595421266dab424');
    },
  );

  recording(
    'openai-compatible/lmstudio-responses-stream-tool-call.chunks.jsonl',
    'LM Studio: raw reasoning text, text, and arguments sent only in .done',
    async () => {
      const file = 'openai-compatible/lmstudio-responses-stream-tool-call.chunks.jsonl';
      const recorded = recordedEvents(file);
      const { message, events } = await replay(file, { model: { provider: 'lmstudio', id: 'zai-org/glm-4.7-flash' } });
      expect(message.content.map((b) => b.type)).toEqual(['thinking', 'text', 'tool_call']);
      const reasoning = doneItem(recorded, 'reasoning');
      expect(thinkingOf(message)).toBe((reasoning.content as Json[])[0]?.text);
      expect(thinkingOf(message)).toMatch(/^The user is asking for the weather in San Francisco\./);
      expect(message.content[0]).toMatchObject({ signature: JSON.stringify(reasoning) });
      expect((message.content[0] as ThinkingContent).redacted).toBeUndefined();
      expect(textOf(message)).toBe("I'll get the current weather information for San Francisco for you.");
      const [call] = toolCallsOf(message);
      expect(call).toMatchObject({
        id: 'call_2025306790300011',
        name: 'weather',
        arguments: { location: 'San Francisco' },
        signature: 'fc_z9synwu0kvc33k6e9u3dq4',
      });
      // No argument deltas were sent: the .done arguments arrive as the one delta.
      expect(recorded.some((e) => e.type === 'response.function_call_arguments.delta')).toBe(false);
      expect(events.filter((e) => e.type === 'tool_call_delta').map((e) => (e.type === 'tool_call_delta' ? e.delta : ''))).toEqual([
        '{"location":"San Francisco"}',
      ]);
      expect(message.stopReason).toBe('tool_use');
      expect(message.usage).toEqual({ input: 180, output: 61, cacheRead: 2, cacheWrite: 0, reasoning: 48, total: 243 });
    },
  );

  recording(
    'openai-responses/nonstream-reasoning-function-call.json',
    'non-streaming: reasoning item and function call, same events as a stream',
    async () => {
      const file = 'openai-responses/nonstream-reasoning-function-call.json';
      const body = JSON.parse(readFixture(file)) as { output: Json[] };
      const { message, events } = await replay(file, { stream: false });
      expect(events.map((e) => e.type)).toEqual([
        'start',
        'thinking_start',
        'thinking_end',
        'tool_call_start',
        'tool_call_delta',
        'tool_call_end',
        'done',
      ]);
      expect(message.content[0]).toEqual({ type: 'thinking', thinking: '', signature: JSON.stringify(body.output[0]), redacted: true });
      expect(toolCallsOf(message)).toEqual([
        {
          type: 'tool_call',
          id: 'call_1w9YRdMtRTRucwZShoZYlLJp',
          name: 'get_country',
          arguments: {},
          rawArguments: '{}',
          signature: 'fc_0c71d6d8526a7a4b006920e0447ea8819da94e572b1f077c44',
        },
      ]);
      expect(message.stopReason).toBe('tool_use');
      expect(message.responseId).toBe('resp_0c71d6d8526a7a4b006920e03f691c819dbca4d1d793e86703');
      expect(message.usage).toEqual({ input: 37, output: 272, cacheRead: 0, cacheWrite: 0, reasoning: 256, total: 309 });
      expect(server?.requests[0]?.json).not.toHaveProperty('stream');
    },
  );

  recording('openai-responses/nonstream-parallel-function-calls.json', 'non-streaming: two function calls', async () => {
    const { message } = await replay('openai-responses/nonstream-parallel-function-calls.json', { stream: false, model: { id: 'gpt-4o' } });
    expect(toolCallsOf(message).map((c) => [c.id, c.name, c.arguments, c.signature])).toEqual([
      ['call_LWVp74L5HaH2KNvgVz9PJsrj', 'get_location', { loc_name: 'Londos' }, 'fc_67e547c540648191bc7505ac667e023f0ae6111e84dd5c08'],
      ['call_YnRAWeTyxI91m5uNa5bxXwVO', 'get_location', { loc_name: 'London' }, 'fc_67e547c55c3081919da7a3f7fe81a1030ae6111e84dd5c08'],
    ]);
    expect(message.stopReason).toBe('tool_use');
    expect(message.usage).toEqual({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0, reasoning: 0, total: 0 }); // as recorded
  });

  recording('openai-responses/error-401-invalid-api-key.json', '401 → auth (fatal), naming the key variable', async () => {
    const { message, events } = await replay('openai-responses/error-401-invalid-api-key.json');
    const error = errorOf(events);
    expect(events).toHaveLength(1);
    expect([error.code, error.kind, error.status]).toEqual(['auth', 'fatal', 401]);
    expect(error.message).toContain('OPENAI_API_KEY');
    expect(error.message).toContain('Incorrect API key provided: invalid-*****2345.');
    expect(message).toMatchObject({ stopReason: 'error', api: 'openai-responses' });
  });

  recording('openai-responses/error-400-model-not-found.json', 'HTTP 400 with code model_not_found → model_not_found (fatal)', async () => {
    const { events } = await replay('openai-responses/error-400-model-not-found.json', {
      model: { id: 'this-model-does-not-exist-12345' },
    });
    const error = errorOf(events);
    expect([error.code, error.kind, error.status]).toEqual(['model_not_found', 'fatal', 400]);
    expect(error.message).toContain("The requested model 'this-model-does-not-exist-12345' does not exist.");
  });

  recording('openai-responses/error-400-invalid-request.json', '400 invalid value → bad_request naming the parameter', async () => {
    const { events } = await replay('openai-responses/error-400-invalid-request.json', { model: { id: 'gpt-4o' } });
    const error = errorOf(events);
    expect([error.code, error.kind, error.status]).toEqual(['bad_request', 'fatal', 400]);
    expect(error.message).toContain("Invalid 'temperature': decimal below minimum value.");
    expect(error.message).toContain('parameter "temperature"');
    expect(error.details).toMatchObject({ code: 'decimal_below_min_value', param: 'temperature' });
  });

  recording(
    'openai-responses/stream-reasoning-encrypted-content.chunks.jsonl',
    'four turns of one run: each reasoning item goes back whole on the next turn',
    async () => {
      const file = 'openai-responses/stream-reasoning-encrypted-content.chunks.jsonl';
      // The recording holds four consecutive responses of one run; the server answers one per request.
      const turns: Json[][] = [];
      for (const event of recordedEvents(file)) {
        if (event.type === 'response.created') turns.push([]);
        turns[turns.length - 1]?.push(event);
      }
      expect(turns).toHaveLength(4);
      server = await startServer(turns.map((events) => ({ headers: { 'content-type': 'text/event-stream' }, body: framed(events) })));
      const model = responsesModel(server.baseUrl, { id: 'gpt-5.1-codex-max' });
      const messages: Message[] = [{ role: 'user', content: 'What is ((12 + 7) * 3) * 10? Use the calculator.' }];
      const results = [19, 57, 570];
      const replies: AssistantMessage[] = [];
      for (let turn = 0; turn < 4; turn++) {
        const { events, message } = await collect(streamOpenAIResponses(model, { messages }, { thinking: 'high' }));
        expectWellFormed(events, message);
        replies.push(message);
        messages.push(message);
        const [call] = toolCallsOf(message);
        if (call !== undefined)
          messages.push({
            role: 'tool',
            toolCallId: call.id,
            toolName: call.name,
            content: [{ type: 'text', text: String(results[turn]) }],
            isError: false,
          });
      }
      const [first, second, third, last] = replies as [AssistantMessage, AssistantMessage, AssistantMessage, AssistantMessage];
      const reasoning = doneItem(turns[0] as Json[], 'reasoning');
      expect(first.content.map((b) => b.type)).toEqual(['thinking', 'tool_call']);
      expect(thinkingOf(first)).toBe(
        "**Calculating step-by-step using calculator**\n\nI'll compute 12 plus 7, then multiply the result by 3, and finally multiply that by 10, reporting the final product.",
      );
      expect(first.content[0]).toMatchObject({ signature: JSON.stringify(reasoning) });
      expect(toolCallsOf(first)[0]).toMatchObject({ id: 'call_AB6AaRZ1FYZB2RwS6A5vbdqn', arguments: { a: 12, b: 7, op: 'add' } });
      expect(toolCallsOf(second)[0]).toMatchObject({ id: 'call_Q6pW65MUgW9vF59BmItYGos3', arguments: { a: 19, b: 3, op: 'multiply' } });
      expect(toolCallsOf(third)[0]).toMatchObject({ id: 'call_Zl5vIMnD7dVAjgU6FkhmiCZh', arguments: { a: 57, b: 10, op: 'multiply' } });
      expect(textOf(last)).toBe('The final result is **570**.');
      expect(replies.map((m) => m.stopReason)).toEqual(['tool_use', 'tool_use', 'tool_use', 'stop']);
      expect(replies.map((m) => m.usage.total)).toEqual([162, 247, 286, 311]);

      // Turn 2 sent the reasoning item of turn 1 back verbatim, paired with its call by item id.
      const input = (server.requests[1]?.json as { input: Json[] }).input;
      expect(input).toEqual([
        { role: 'user', content: [{ type: 'input_text', text: 'What is ((12 + 7) * 3) * 10? Use the calculator.' }] },
        { type: 'reasoning', id: reasoning.id, encrypted_content: reasoning.encrypted_content, summary: reasoning.summary },
        {
          type: 'function_call',
          call_id: 'call_AB6AaRZ1FYZB2RwS6A5vbdqn',
          name: 'calculator',
          arguments: '{"a":12,"b":7,"op":"add"}',
          id: 'fc_01830d662ab3856501693c32151234819091cfca267e98cc5f',
        },
        { type: 'function_call_output', call_id: 'call_AB6AaRZ1FYZB2RwS6A5vbdqn', output: '19' },
      ]);
      const lastInput = (server.requests[3]?.json as { input: Json[] }).input;
      expect(lastInput.map((item) => item.type ?? item.role)).toEqual([
        'user',
        'reasoning',
        'function_call',
        'function_call_output',
        'function_call',
        'function_call_output',
        'function_call',
        'function_call_output',
      ]);
      expect(server.requests[0]?.json).toMatchObject({
        store: false,
        include: ['reasoning.encrypted_content'],
        reasoning: { effort: 'high', summary: 'auto' },
      });
    },
  );
});

interface ObservedItem {
  provider: string;
  scenario: string;
  body: Json;
}

describe('Responses errors observed in issue reports, delivered mid-stream', () => {
  const observed = (JSON.parse(readFixture('errors/observed-in-issue-reports.json')) as { items: ObservedItem[] }).items.filter(
    (item) => item.provider === 'openai-responses',
  );
  const before: Json[] = [
    { type: 'response.created', response: { id: 'resp_observed', status: 'in_progress', output: [] } },
    { type: 'response.output_item.added', output_index: 0, item: { id: 'msg_observed', type: 'message', role: 'assistant', content: [] } },
    { type: 'response.output_text.delta', output_index: 0, content_index: 0, item_id: 'msg_observed', delta: 'Half an ans' },
  ];

  it('has the two Responses items', () => {
    expect(observed.map((item) => item.scenario.slice(0, 30))).toEqual([
      'rate limit delivered INSIDE a ',
      'server_error delivered as a Re',
    ]);
  });

  it('a rate limit inside the stream → transient rate_limited with the hinted wait, partial text kept', async () => {
    const item = observed.find((o) => o.scenario.startsWith('rate limit')) as ObservedItem;
    // The SDK surfaced the `error` member of the event; it arrives as an `error` event.
    const error = { type: 'error', sequence_number: 3, error: item.body };
    const { events, message } = await replay('', {
      response: { headers: { 'content-type': 'text/event-stream' }, body: framed([...before, error]) },
    });
    expect(errorOf(events)).toMatchObject({ code: 'rate_limited', kind: 'transient', retryAfterMs: 1574 });
    expect(errorOf(events).message).toContain(item.body.message as string);
    expect(textOf(message)).toBe('Half an ans');
    expect(message.stopReason).toBe('error');
  });

  it('a server_error event (sequence 59) → transient server_error', async () => {
    const item = observed.find((o) => o.scenario.startsWith('server_error')) as ObservedItem;
    const { events } = await replay('', {
      response: { headers: { 'content-type': 'text/event-stream' }, body: framed([...before, item.body]) },
    });
    const error = errorOf(events);
    expect([error.code, error.kind]).toEqual(['server_error', 'transient']);
    expect(error.message).toContain('An error occurred while processing your request.');
  });
});
