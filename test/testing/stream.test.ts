import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { startScriptedServer, text, toolCall, toolCalls, type ScriptedServer, type ScriptTurn } from '../../src/testing/index.js';
import { assemble, chunks, parseSse, post, streamChat, USER, type Wire } from './helpers.js';

let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(script: ScriptTurn[], chunkSize?: number): Promise<ScriptedServer> {
  server = await startScriptedServer(chunkSize === undefined ? { script } : { script, chunkSize });
  return server;
}

const fixture = (name: string): Wire[] =>
  chunks(parseSse(readFileSync(new URL(`../../../shared/fixtures/openai-chat/${name}`, import.meta.url), 'utf8')));

describe('scripted server: streaming', () => {
  it('streams text in several deltas: role first, then stop and [DONE]', async () => {
    const { url } = await start([text('The quick brown fox jumps over the lazy dog.')]);
    const { response, frames } = await streamChat(url, { model: 'gpt-test' });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const all = chunks(frames);
    expect(all[0]!.choices[0].delta).toEqual({ role: 'assistant', content: '' });
    expect(all.filter((c) => typeof c.choices[0]?.delta.content === 'string' && c.choices[0].delta.content !== '').length).toBeGreaterThan(
      2,
    );
    expect(all[0]).toMatchObject({ object: 'chat.completion.chunk', model: 'gpt-test' });
    expect(new Set(all.map((c) => c.id)).size).toBe(1);
    expect(frames.at(-1)).toBe('[DONE]');
    const assembled = assemble(frames);
    expect(assembled.text).toBe('The quick brown fox jumps over the lazy dog.');
    expect(assembled.finishReasons).toEqual(['stop']);
    expect(all.every((c) => !('usage' in c))).toBe(true);
  });

  it('chunks carry the envelope fields of a real OpenAI stream', async () => {
    const { url } = await start([text('hello')]);
    const { frames } = await streamChat(url, { stream_options: { include_usage: true } });
    const real = fixture('stream-text-usage.sse');
    const realKeys = new Set(Object.keys(real[0]!));
    for (const chunk of chunks(frames)) for (const key of Object.keys(chunk)) expect(realKeys).toContain(key);
    expect(Object.keys(chunks(frames)[0]!.choices[0])).toEqual(expect.arrayContaining(['index', 'delta', 'finish_reason']));
  });

  it('sends a usage chunk with choices [] only when stream_options.include_usage is set', async () => {
    const { url } = await start([text('one', { usage: { prompt_tokens: 7, completion_tokens: 3 } }), text('two')]);
    const withUsage = chunks((await streamChat(url, { stream_options: { include_usage: true } })).frames);
    const last = withUsage.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.usage).toMatchObject({ prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 });
    expect(withUsage.slice(0, -1).every((c) => c.usage === null)).toBe(true);
    const without = chunks((await streamChat(url, {})).frames);
    expect(without.some((c) => c.choices.length === 0 || 'usage' in c)).toBe(false);
  });

  it('streams parallel tool calls the way OpenAI does', async () => {
    const { url } = await start(
      [
        toolCalls(
          { name: 'search', arguments: { query: 'latest release notes of every model' } },
          { name: 'lookup', arguments: { id: 42 } },
        ),
        toolCall('again', { x: 1 }),
        toolCall('mine', {}, 'call_given'),
      ],
      8,
    );
    const { frames } = await streamChat(url, {});
    const all = chunks(frames);
    expect(all[0]!.choices[0].delta).toEqual({ role: 'assistant', content: null });
    const firsts = all.map((c) => c.choices[0]?.delta.tool_calls?.[0]).filter((call) => call?.id !== undefined);
    const realFirst = fixture('stream-parallel-tool-calls.sse')[1]!.choices[0].delta.tool_calls[0];
    expect(firsts).toHaveLength(2);
    for (const first of firsts) {
      expect(Object.keys(first).sort()).toEqual(Object.keys(realFirst).sort());
      expect(first.function.arguments).toBe('');
      expect(first.type).toBe('function');
    }
    const assembled = assemble(frames);
    expect(assembled.toolCalls.map((c) => [c.id, c.name])).toEqual([
      ['call_1', 'search'],
      ['call_2', 'lookup'],
    ]);
    expect(JSON.parse(assembled.toolCalls[0]!.arguments)).toEqual({ query: 'latest release notes of every model' });
    expect(JSON.parse(assembled.toolCalls[1]!.arguments)).toEqual({ id: 42 });
    expect(all.filter((c) => c.choices[0]?.delta.tool_calls?.[0]?.index === 0).length).toBeGreaterThan(3);
    expect(assembled.finishReasons).toEqual(['tool_calls']);
    expect(frames.at(-1)).toBe('[DONE]');

    // Ids stay unique across turns of one server unless the turn names one.
    expect(assemble((await streamChat(url, {})).frames).toolCalls[0]!.id).toBe('call_3');
    expect(assemble((await streamChat(url, {})).frames).toolCalls[0]!.id).toBe('call_given');
  });

  it('sends string arguments verbatim, so malformed JSON reaches the client as is', async () => {
    const { url } = await start([toolCall('write', '{"path": "a.txt", "content": "unterminated')]);
    const { toolCalls: calls } = assemble((await streamChat(url, {})).frames);
    expect(calls[0]!.arguments).toBe('{"path": "a.txt", "content": "unterminated');
  });

  it('streams thinking as reasoning_content before the text', async () => {
    const { url } = await start([{ thinking: 'Let me think about this carefully.', text: 'Answer.' }]);
    const { frames } = await streamChat(url, {});
    const assembled = assemble(frames);
    expect(assembled.thinking).toBe('Let me think about this carefully.');
    expect(assembled.text).toBe('Answer.');
    const deltas = chunks(frames).map((c) => c.choices[0]?.delta ?? {});
    const lastThinking = deltas.findLastIndex((d) => 'reasoning_content' in d);
    const firstText = deltas.findIndex((d) => typeof d.content === 'string' && d.content !== '');
    expect(lastThinking).toBeLessThan(firstText);
  });

  it('omits finish_reason entirely when the turn says null', async () => {
    const { url } = await start([text('no reason given', { finishReason: null })]);
    const { frames } = await streamChat(url, {});
    expect(chunks(frames).every((c) => !('finish_reason' in c.choices[0]))).toBe(true);
    expect(assemble(frames).text).toBe('no reason given');
    expect(frames.at(-1)).toBe('[DONE]');
  });

  it('never splits a surrogate pair across deltas', async () => {
    const emoji = '😀'.repeat(20);
    const { url } = await start([text(emoji)], 3);
    const deltas = chunks((await streamChat(url, {})).frames)
      .map((c) => c.choices[0]?.delta.content)
      .filter(Boolean);
    for (const piece of deltas) expect(piece.isWellFormed()).toBe(true);
    expect(deltas.join('')).toBe(emoji);
  });

  it('estimates usage deterministically, growing with the request', async () => {
    const { url } = await start([text('same'), text('same'), text('same')]);
    const usageOf = async (messages: unknown[]): Promise<Wire> =>
      chunks((await streamChat(url, { messages, stream_options: { include_usage: true } })).frames).at(-1)!.usage;
    const a = await usageOf(USER);
    const b = await usageOf(USER);
    const c = await usageOf([{ role: 'user', content: 'x'.repeat(4000) }]);
    expect(a).toEqual(b);
    expect(a.prompt_tokens).toBeGreaterThan(0);
    expect(a.total_tokens).toBe(a.prompt_tokens + a.completion_tokens);
    expect(c.prompt_tokens).toBeGreaterThan(a.prompt_tokens + 900);
  });
});

describe('scripted server: JSON mode', () => {
  it('answers text as one chat.completion body when stream is absent', async () => {
    const { url } = await start([text('Paris.', { thinking: 'capital of France' })]);
    const response = await post(url, { model: 'gpt-test', messages: USER });
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    const body = (await response.json()) as Wire;
    expect(body).toMatchObject({ object: 'chat.completion', model: 'gpt-test' });
    expect(body.choices[0]).toMatchObject({
      index: 0,
      message: { role: 'assistant', content: 'Paris.', reasoning_content: 'capital of France' },
      finish_reason: 'stop',
    });
    expect(body.usage.total_tokens).toBe(body.usage.prompt_tokens + body.usage.completion_tokens);
  });

  it('answers tool calls with content null, like the recorded response', async () => {
    const { url } = await start([toolCalls({ name: 'a', arguments: { n: 1 } }, { name: 'b', arguments: '{bad' })]);
    const body = (await (await post(url, { model: 'm', messages: USER, stream: false })).json()) as Wire;
    const real = JSON.parse(
      readFileSync(new URL('../../../shared/fixtures/openai-chat/nonstream-parallel-tool-calls.json', import.meta.url), 'utf8'),
    ) as Wire;
    const message = body.choices[0].message;
    expect(message.content).toBeNull();
    expect(message.tool_calls).toEqual([
      { id: 'call_1', type: 'function', function: { name: 'a', arguments: '{"n":1}' } },
      { id: 'call_2', type: 'function', function: { name: 'b', arguments: '{bad' } },
    ]);
    expect(Object.keys(message.tool_calls[0]).sort()).toEqual(Object.keys(real.choices[0].message.tool_calls[0]).sort());
    expect(body.choices[0].finish_reason).toBe('tool_calls');
  });
});
