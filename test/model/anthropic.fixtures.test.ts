/**
 * Every Anthropic Messages recording in ../shared/fixtures/anthropic/, and the Anthropic
 * error payloads of errors/observed-in-issue-reports.json, replayed by a real local HTTP
 * server, decode to the right events and final message, or to the right typed error.
 * Expected values are the ones in the recordings.
 */
import { readdirSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { streamAnthropic } from '../../src/model/providers/anthropic.js';
import type { AssistantMessage, AssistantStreamEvent, ModelRef } from '../../src/model/types.js';
import { FIXTURES_DIR, fixtureResponse, readFixture, startServer } from './fixture-server.js';
import type { ScriptedResponse, TestServer } from './fixture-server.js';
import { collect, expectWellFormed, testModel, textOf, thinkingOf, toolCallsOf } from './stream-helpers.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const ANTHROPIC: Partial<ModelRef> = { provider: 'anthropic', id: 'claude-sonnet-4-5', api: 'anthropic-messages', apiKey: 'sk-ant-test' };

/**
 * The recorded response of a fixture. Payload-only `.chunks.jsonl` recordings are rebuilt
 * with their `event:` lines, as Anthropic sends them (fixtures/README.md).
 */
function anthropicFixture(file: string): ScriptedResponse {
  const response = fixtureResponse(file);
  if (!file.endsWith('.chunks.jsonl')) return response;
  const lines = readFixture(file)
    .split('\n')
    .filter((line) => line.trim() !== '');
  const body = lines.map((line) => `event: ${(JSON.parse(line) as { type: string }).type}\ndata: ${line}\n\n`).join('');
  return { ...response, body };
}

async function replay(file: string, options: { stream?: boolean; model?: Partial<ModelRef> } = {}) {
  return replayResponse(anthropicFixture(file), options);
}

async function replayResponse(
  response: ScriptedResponse,
  options: { stream?: boolean; model?: Partial<ModelRef> } = {},
): Promise<{ events: AssistantStreamEvent[]; message: AssistantMessage }> {
  server = await startServer([response]);
  const model = testModel(server.baseUrl, { ...ANTHROPIC, ...options.model });
  const result = await collect(streamAnthropic(model, { messages: [{ role: 'user', content: 'hi' }] }, { stream: options.stream }));
  expectWellFormed(result.events, result.message);
  expect(server.requests).toHaveLength(1);
  expect(result.message.api).toBe('anthropic-messages');
  return result;
}

function errorOf(events: AssistantStreamEvent[]): Extract<AssistantStreamEvent, { type: 'error' }> {
  const last = events[events.length - 1];
  if (last?.type !== 'error') throw new Error(`expected an error event, got ${last?.type}`);
  return last;
}

/** The signature(s) a recording sends, in order, read from its signature_delta frames or thinking blocks. */
function signaturesIn(file: string): string[] {
  return [...readFixture(file).matchAll(/"signature":\s*"([^"]+)"/g)].map((match) => match[1] ?? '');
}

function usage(input: number, output: number, cacheRead = 0, cacheWrite = 0, reasoning = 0) {
  return { input, output, cacheRead, cacheWrite, reasoning, total: input + output + cacheRead + cacheWrite };
}

describe('anthropic recordings', () => {
  it('covers every Anthropic fixture (a new recording needs a test here)', () => {
    const covered = new Set(TESTED);
    const all = readdirSync(new URL('anthropic/', FIXTURES_DIR))
      .filter((name) => /\.(sse|json|txt|jsonl)$/.test(name))
      .map((name) => `anthropic/${name}`);
    expect(all.filter((file) => !covered.has(file))).toEqual([]);
  });

  it('plain text with whitespace-padded data lines and a ping', async () => {
    const { message, events } = await replay('anthropic/stream-text.sse');
    expect(textOf(message)).toBe('- Captain\n- Scoop');
    expect(events.filter((e) => e.type === 'text_delta').map((e) => e.type === 'text_delta' && e.delta)).toEqual([
      '-',
      ' Captain',
      '\n- Sc',
      'oop',
    ]);
    expect(message.stopReason).toBe('stop');
    expect(message.responseId).toBe('msg_017A4s3HAsrqf5d2WvBmrpLr');
    expect(message.usage).toEqual(usage(17, 10));
    // The requested id is kept (the server answered with its dated snapshot id).
    expect(message.model).toBe('claude-sonnet-4-5');
    expect(server?.requests[0]?.url).toBe('/v1/messages');
  });

  it('prompt cache hit: cache_read_input_tokens become cacheRead, input excludes them', async () => {
    const { message } = await replay('anthropic/stream-text-prompt-cache-hit.sse');
    expect(textOf(message)).toBe('Goodbye.');
    expect(message.usage).toEqual({ input: 3, output: 6, cacheRead: 1217, cacheWrite: 0, reasoning: 0, total: 1226 });
  });

  it('max_tokens → stopReason length with the text so far', async () => {
    const { message } = await replay('anthropic/stream-max-tokens.sse');
    expect(textOf(message)).toBe(
      'Here are all 50 U.S. states in alphabetical order:\n\n1. Alabama\n2. Alaska\n3. Arizona\n4. Arkansas\n5. California\n6. Colorado\n7. Connecticut\n8. Delaware\n9',
    );
    expect(message.stopReason).toBe('length');
    expect(message.usage).toEqual(usage(15, 50));
  });

  it('text, then a tool call whose arguments arrive as input_json_delta fragments', async () => {
    const { message, events } = await replay('anthropic/stream-tool-use.sse');
    expect(message.content.map((b) => b.type)).toEqual(['text', 'tool_call']);
    expect(textOf(message)).toBe(
      "I'll help you find out the current temperature in San Francisco. I'll use the get_current_temperature function to retrieve this information.",
    );
    const [call] = toolCallsOf(message);
    expect([call?.id, call?.name, call?.arguments, call?.rawArguments]).toEqual([
      'toolu_01Lfr3kUnHMZApePPRWMv1uS',
      'get_current_temperature',
      { city: 'San Francisco' },
      '{"city": "San Francisco"}',
    ]);
    // The leading empty fragment is not an event; the partial arguments grow.
    const deltas = events.filter((e) => e.type === 'tool_call_delta');
    expect(deltas.map((e) => e.delta)).toEqual(['{"c', 'ity":', ' "San Franci', 'sco"}']);
    expect(deltas.map((e) => e.partialArguments)).toEqual([{}, {}, { city: 'San Franci' }, { city: 'San Francisco' }]);
    expect(message.stopReason).toBe('tool_use');
    expect(message.usage).toEqual(usage(351, 85));
    const types = events.map((e) => e.type);
    expect(types.indexOf('text_end')).toBeLessThan(types.indexOf('tool_call_start'));
  });

  it('parallel tool calls', async () => {
    const { message, events } = await replay('anthropic/stream-parallel-tool-use.sse');
    expect(textOf(message)).toBe("I'll retrieve the secrets for both passwords you provided.");
    expect(toolCallsOf(message).map((c) => [c.id, c.name, c.arguments])).toEqual([
      ['toolu_015cUijgET79LXjgeYQerN2h', 'secret_retrieval_tool', { password: 'mellon' }],
      ['toolu_01XZTimPexA7h3EVKesnKt5T', 'secret_retrieval_tool', { password: 'radiance' }],
    ]);
    expect(events.filter((e) => e.type === 'tool_call_end').map((e) => e.index)).toEqual([1, 2]);
    expect(message.stopReason).toBe('tool_use');
    expect(message.usage).toEqual(usage(416, 109));
  });

  it('thinking with its signature, then text', async () => {
    const { message, events } = await replay('anthropic/stream-thinking-text.sse');
    expect(message.content.map((b) => b.type)).toEqual(['thinking', 'text']);
    expect(thinkingOf(message)).toBe(
      'This is a straightforward question about pedestrian safety. I should provide clear, helpful advice about how to safely cross a street. This is basic safety information that could help prevent accidents.',
    );
    const [thinking] = message.content;
    expect(signaturesIn('anthropic/stream-thinking-text.sse')).toHaveLength(1);
    expect(thinking).toMatchObject({ type: 'thinking', signature: signaturesIn('anthropic/stream-thinking-text.sse')[0] });
    expect(thinking?.type === 'thinking' && thinking.signature).toMatch(/^EvMCCkYICxgC.*jfQYAQ==$/);
    expect(thinking?.type === 'thinking' && thinking.redacted).toBeUndefined();
    expect(textOf(message)).toMatch(
      /^Here are the basic steps for safely crossing the street:\n\n\*\*At intersections with traffic lights:\*\*/,
    );
    expect(textOf(message)).toMatch(/Always prioritize safety over speed when crossing streets\.$/);
    // Anthropic's empty thinking_delta before the signature is not an event.
    expect(events.filter((e) => e.type === 'thinking_delta')).toHaveLength(13);
    expect(message.stopReason).toBe('stop');
    expect(message.usage).toEqual(usage(43, 282));
  });

  it('thinking, then a tool call with no arguments; thinking tokens counted as reasoning', async () => {
    const { message } = await replay('anthropic/stream-thinking-tool-use.sse', { model: { id: 'claude-haiku-4-5-20251001' } });
    expect(message.content.map((b) => b.type)).toEqual(['thinking', 'tool_call']);
    expect(thinkingOf(message)).toBe(
      'The user wants me to:\n1. Use the fixed_version tool\n2. Tell them the version\n3. Make a short joke about it\n\nLet me first call the fixed_version tool to see what version it returns.',
    );
    expect(message.content[0]).toMatchObject({ signature: signaturesIn('anthropic/stream-thinking-tool-use.sse')[0] });
    expect(signaturesIn('anthropic/stream-thinking-tool-use.sse')[0]).toMatch(/^EoQDCm0IDhgC.*jSBwUxgB$/);
    const [call] = toolCallsOf(message);
    expect([call?.id, call?.name, call?.arguments, call?.rawArguments]).toEqual([
      'toolu_01825dXWLSoJwCst1qTsiWdb',
      'fixed_version',
      {},
      '',
    ]);
    expect(message.stopReason).toBe('tool_use');
    expect(message.usage).toEqual(usage(598, 92, 0, 0, 53));
  });

  it('turn 2 after the tool result: text with an emoji, thinking_tokens 0', async () => {
    const { message } = await replay('anthropic/stream-thinking-tool-use-turn2.sse');
    expect(textOf(message)).toBe(
      "The version is **0.32a0**.\n\nHere's a joke about it: \n\nLooks like this version is still in alpha testing... I guess you could say it's going through a \"0.32a good time\" before becoming stable! 😄\n\n(It's at version 0.32a, which means it's far from 1.0, so plenty of room to grow!)",
    );
    expect(message.stopReason).toBe('stop');
    expect(message.usage).toEqual(usage(707, 89));
  });

  it('adaptive thinking (Opus 4.6): a whitespace text block, thinking, then the answer, each its own block', async () => {
    const { message } = await replay('anthropic/stream-adaptive-thinking-opus.sse', { model: { id: 'claude-opus-4-6' } });
    expect(message.content.map((b) => b.type)).toEqual(['text', 'thinking', 'text']);
    expect(message.content[0]).toEqual({ type: 'text', text: '\n\n' });
    expect(message.content[1]).toMatchObject({
      type: 'thinking',
      thinking: 'Brief answer with two pet pelican names.',
      signature: signaturesIn('anthropic/stream-adaptive-thinking-opus.sse')[0],
    });
    expect(message.content[2]).toEqual({ type: 'text', text: '1. **Captain Scoop**\n2. **Gullet**' });
    expect(message.usage).toEqual(usage(34, 44));
  });

  it('server-side code execution: server_tool_use and its result block are skipped, not tool calls', async () => {
    const { message, events } = await replay('anthropic/stream-server-tool-code-execution.sse', { model: { id: 'claude-sonnet-4-6' } });
    expect(message.content.map((b) => b.type)).toEqual(['thinking', 'text', 'text']);
    expect(thinkingOf(message)).toBe('Let me calculate this mathematical expression.');
    expect(message.content[0]).toMatchObject({ signature: signaturesIn('anthropic/stream-server-tool-code-execution.sse')[0] });
    expect(message.content[1]).toEqual({ type: 'text', text: "I'll calculate that expression for you right away!" });
    expect(message.content[2]?.type === 'text' && message.content[2].text).toMatch(
      /^Following the standard \*\*order of operations \(PEMDAS\/BODMAS\)\*\*/,
    );
    expect(message.content[2]?.type === 'text' && message.content[2].text).toMatch(/✅ Final Answer: \*\*-428,330,955\.97745\*\*$/);
    expect(toolCallsOf(message)).toEqual([]);
    expect(events.some((e) => e.type === 'tool_call_start' || e.type === 'tool_call_delta')).toBe(false);
    expect(JSON.stringify(message)).not.toContain('srvtoolu_');
    expect(message.stopReason).toBe('stop');
    // message_delta's usage (after the server tool ran) replaces message_start's.
    expect(message.usage).toEqual(usage(4714, 304));
  });

  it('server-side web search: search blocks skipped, citations_delta ignored, text blocks kept in order', async () => {
    const { message } = await replay('anthropic/stream-server-tool-web-search.sse', { model: { id: 'claude-opus-4-1-20250805' } });
    expect(message.content).toHaveLength(10);
    expect(message.content.every((b) => b.type === 'text')).toBe(true);
    expect(textOf(message)).toBe(
      "Based on the search results, here's the current weather in San Francisco:\n\n" +
        'Today (November 15, 2025) in San Francisco is overcast with a slight chance of a rain shower, with a high of 63°F. ' +
        'Winds are from the west at 10 to 15 mph.\n\n' +
        'Tonight, it will be cloudy with periods of rain, with a low around 55°F and southwest winds at 10 to 15 mph. The chance of rain is 80%, with rainfall around a quarter of an inch expected.\n\n' +
        'Current conditions show partly cloudy skies with 77% humidity and a dew point of 53°F, with visibility at 9 miles.\n\n' +
        'The weekend forecast indicates continued rain, with a Level 1 storm system bringing periods of rain this weekend.',
    );
    expect(JSON.stringify(message)).not.toContain('encrypted_content');
    expect(message.stopReason).toBe('stop');
    expect(message.usage).toEqual(usage(10423, 341));
  });

  it('non-streaming: thinking with signature, text, and a tool call with empty input', async () => {
    const { message, events } = await replay('anthropic/nonstream-thinking-tool-use.json', {
      stream: false,
      model: { id: 'claude-sonnet-4-0' },
    });
    expect(events.map((e) => e.type)).toEqual([
      'start',
      'thinking_start',
      'thinking_delta',
      'thinking_end',
      'text_start',
      'text_delta',
      'text_end',
      'tool_call_start',
      'tool_call_end',
      'done',
    ]);
    expect(thinkingOf(message)).toMatch(/^The user is asking about the largest city in "the user country"\./);
    expect(message.content[0]).toMatchObject({
      type: 'thinking',
      signature: signaturesIn('anthropic/nonstream-thinking-tool-use.json')[0],
    });
    expect(signaturesIn('anthropic/nonstream-thinking-tool-use.json')[0]).toMatch(/^EqEECkYICxgC.*EK5\/JwYAQ==$/);
    expect(textOf(message)).toBe("I'll help you find the largest city in your country. First, let me determine which country you're from.");
    expect(toolCallsOf(message).map((c) => [c.id, c.name, c.arguments])).toEqual([
      ['toolu_01YGzqpRE16Vricda3Aqcejo', 'get_user_country', {}],
    ]);
    expect(message.responseId).toBe('msg_01WvueFjZVbHcj4H4zUzeGv2');
    expect(message.stopReason).toBe('tool_use');
    expect(message.usage).toEqual(usage(398, 155));
    expect(server?.requests[0]?.json).not.toHaveProperty('stream');
  });

  it('non-streaming parallel tool calls (input given whole, unknown `caller` field ignored)', async () => {
    const { message } = await replay('anthropic/nonstream-parallel-tool-use.json', { stream: false, model: { id: 'claude-sonnet-4-6' } });
    expect(textOf(message)).toBe("I'll execute all 3 parallel searches simultaneously right now!");
    expect(toolCallsOf(message).map((c) => [c.id, c.name, c.arguments, c.rawArguments])).toEqual([
      [
        'toolu_01NwzvrxEz6tvT3A8ydvMtHu',
        'parallel_local_search_one',
        { query: 'latest OpenAI model release notes' },
        '{"query":"latest OpenAI model release notes"}',
      ],
      [
        'toolu_01YCxzSB1suk9uPVC1uwfHz9',
        'parallel_local_search_two',
        { query: 'latest Anthropic model release notes' },
        '{"query":"latest Anthropic model release notes"}',
      ],
      [
        'toolu_01Mauvxzv58eDY7pUt9HMKGy',
        'parallel_local_search_three',
        { query: 'latest Gemini model release notes' },
        '{"query":"latest Gemini model release notes"}',
      ],
    ]);
    expect(message.stopReason).toBe('tool_use');
    expect(message.usage).toEqual(usage(914, 169));
  });

  it('401 authentication_error → auth (fatal), naming ANTHROPIC_API_KEY and quoting Anthropic', async () => {
    const { message, events } = await replay('anthropic/error-401-authentication.json');
    const { error } = errorOf(events);
    expect(events).toHaveLength(1);
    expect([error.code, error.kind, error.status]).toEqual(['auth', 'fatal', 401]);
    expect(error.message).toContain('ANTHROPIC_API_KEY');
    expect(error.message).toContain('invalid x-api-key');
    expect(error.details).toMatchObject({ type: 'authentication_error' });
    expect(message.stopReason).toBe('error');
    expect(message.error?.code).toBe('auth');
  });

  it('404 not_found_error about the model → model_not_found', async () => {
    const { events } = await replay('anthropic/error-404-not-found-model.json', { model: { id: 'this-model-does-not-exist-12345' } });
    const { error } = errorOf(events);
    expect([error.code, error.kind, error.status]).toEqual(['model_not_found', 'fatal', 404]);
    expect(error.message).toContain('model: this-model-does-not-exist-12345');
  });

  it('400 invalid_request_error → bad_request (fatal)', async () => {
    const { events } = await replay('anthropic/error-400-invalid-request.json');
    const { error } = errorOf(events);
    expect([error.code, error.kind, error.status]).toEqual(['bad_request', 'fatal', 400]);
    expect(error.message).toContain("This model does not support effort level 'xhigh'. Supported levels: high, low, max, medium.");
    expect(error.details).toMatchObject({ type: 'invalid_request_error' });
  });
});

interface IssueItem {
  provider: string;
  status: number | null;
  scenario: string;
  headers?: Record<string, string>;
  body: unknown;
}

const issueItems = (JSON.parse(readFixture('errors/observed-in-issue-reports.json')) as { items: IssueItem[] }).items.filter(
  (item) => item.provider === 'anthropic',
);

function issueItem(scenario: RegExp): IssueItem {
  const item = issueItems.find((candidate) => scenario.test(candidate.scenario));
  if (item === undefined) throw new Error(`no Anthropic issue-report item matches ${scenario}`);
  return item;
}

function httpError(item: IssueItem, extraHeaders: Record<string, string> = {}): ScriptedResponse {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...extraHeaders };
  for (const [name, value] of Object.entries(item.headers ?? {}))
    if (name !== 'content-length' && name !== 'connection') headers[name] = value;
  return { status: item.status ?? 500, headers, body: item.body === null ? '' : JSON.stringify(item.body) };
}

describe('anthropic errors from issue reports', () => {
  it('has the six Anthropic items this suite covers', () => {
    expect(issueItems).toHaveLength(6);
  });

  it('429 rate_limit_error → transient rate_limited, honouring retry-after', async () => {
    const { events } = await replayResponse(httpError(issueItem(/^rate_limit_error body/), { 'retry-after': '7' }));
    const { error } = errorOf(events);
    expect([error.code, error.kind, error.status, error.retryAfterMs]).toEqual(['rate_limited', 'transient', 429, 7000]);
    expect(error.message).toContain('40,000 input tokens per minute');
  });

  it('429 with the recorded headers and no body (no retry-after) → transient rate_limited', async () => {
    const { events } = await replayResponse(httpError(issueItem(/^429 response HEADERS/)));
    const { error } = errorOf(events);
    expect([error.code, error.kind, error.status, error.retryAfterMs]).toEqual(['rate_limited', 'transient', 429, undefined]);
  });

  it('529 overloaded_error → transient overloaded', async () => {
    const { events } = await replayResponse(httpError(issueItem(/^overloaded_error \(HTTP 529\)/)));
    const { error } = errorOf(events);
    expect([error.code, error.kind, error.status]).toEqual(['overloaded', 'transient', 529]);
    expect(error.message).toContain('Overloaded');
  });

  it('500 api_error "Overloaded" → transient', async () => {
    const { events } = await replayResponse(httpError(issueItem(/^api_error/)));
    const { error } = errorOf(events);
    expect([error.code, error.kind, error.status]).toEqual(['overloaded', 'transient', 500]);
    expect(error.details).toMatchObject({ type: 'api_error' });
  });

  it('400 "prompt is too long" → fatal context_length', async () => {
    const { events } = await replayResponse(httpError(issueItem(/^prompt too long/)));
    const { error } = errorOf(events);
    expect([error.code, error.kind, error.status]).toEqual(['context_length', 'fatal', 400]);
    expect(error.message).toContain('prompt is too long: 208310 tokens > 200000 maximum');
  });

  it('overloaded_error as an `event: error` frame after HTTP 200 → transient, with the partial message', async () => {
    const { body } = issueItem(/^overloaded_error, newer shape/);
    const text = readFixture('anthropic/stream-text.sse');
    // The recorded stream up to its first text delta, then the error frame.
    const cut = text.slice(0, text.indexOf('event: content_block_stop'));
    const { message, events } = await replayResponse({
      headers: { 'content-type': 'text/event-stream' },
      body: `${cut}event: error\ndata: ${JSON.stringify(body)}\n\n`,
    });
    const { error } = errorOf(events);
    expect([error.code, error.kind, error.status]).toEqual(['overloaded', 'transient', undefined]);
    expect(error.message).toContain('(in the stream)');
    expect(textOf(message)).toBe('- Captain\n- Scoop');
    expect(message.stopReason).toBe('error');
    expect(message.usage.input).toBe(17);
  });
});

const TESTED = [
  'anthropic/stream-text.sse',
  'anthropic/stream-text-prompt-cache-hit.sse',
  'anthropic/stream-max-tokens.sse',
  'anthropic/stream-tool-use.sse',
  'anthropic/stream-parallel-tool-use.sse',
  'anthropic/stream-thinking-text.sse',
  'anthropic/stream-thinking-tool-use.sse',
  'anthropic/stream-thinking-tool-use-turn2.sse',
  'anthropic/stream-adaptive-thinking-opus.sse',
  'anthropic/stream-server-tool-code-execution.sse',
  'anthropic/stream-server-tool-web-search.sse',
  'anthropic/nonstream-thinking-tool-use.json',
  'anthropic/nonstream-parallel-tool-use.json',
  'anthropic/error-401-authentication.json',
  'anthropic/error-404-not-found-model.json',
  'anthropic/error-400-invalid-request.json',
];
