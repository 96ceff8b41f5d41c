// Real runs as tests: a run recorded against a provider (the scripted server stands in for
// it) is played back over the same wire by a fixture server and in process by replayModel;
// a changed agent's first differing request is reported.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Agent } from '../../src/loop/agent.js';
import { replayModel } from '../../src/loop/replay.js';
import { firstDifference, loadFixture, parseFixture, recordTo } from '../../src/model/fixture.js';
import { startFixtureServer, type FixtureServer } from '../../src/testing/fixture-server.js';
import { startScriptedServer, text, toolCall, type ScriptedServer } from '../../src/testing/index.js';
import type { ModelApi, ModelRef } from '../../src/model/types.js';
import { defineTool } from '../../src/tools/define.js';

const KEY = 'sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD';
let dir: string;
const closing: Array<ScriptedServer | FixtureServer> = [];
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rein-fixture-'));
});
afterEach(async () => {
  await Promise.all(closing.splice(0).map((s) => s.close()));
  await rm(dir, { recursive: true, force: true });
});

function lookup(answer: (order: string) => string) {
  return defineTool({
    name: 'order_status',
    description: 'The status of an order.',
    parameters: { type: 'object', properties: { order: { type: 'string' } }, required: ['order'] },
    execute: ({ order }) => answer(String(order)),
  });
}

/** Records one run of the agent against the scripted server, as the wire `api`. */
async function record(api: ModelApi): Promise<{ file: string; model: (base: string) => ModelRef; text: string }> {
  const provider = await startScriptedServer({
    script: (request) =>
      request.messages.at(-1)?.role === 'tool'
        ? text(`Order 42 is ${request.messages.at(-1)?.content}.`)
        : toolCall('order_status', { order: '42' }),
  });
  closing.push(provider);
  const file = join(dir, 'run.fixture.jsonl');
  const model = (base: string): ModelRef => ({ ...provider.model('gpt-4o', api), baseUrl: base, apiKey: KEY });
  const base = api === 'openai-chat' || api === 'openai-responses' ? provider.url : provider.origin;
  const agent = new Agent({ model: model(base), tools: [lookup(() => 'shipped')], modelOptions: { transport: recordTo(file) } });
  const result = await agent.run('where is order 42?');
  expect(result.status).toBe('done');
  return { file, model, text: result.text };
}

describe('recording a run', () => {
  it('writes each exchange as sent and received, the key redacted', async () => {
    const { file, text: said } = await record('openai-chat');
    expect(said).toBe('Order 42 is shipped.');
    const raw = await readFile(file, 'utf8');
    expect(raw.split('\n')[0]).toBe('{"rein":"fixture","version":1}');
    expect(raw).not.toContain(KEY);
    const { exchanges } = parseFixture(raw);
    expect(exchanges).toHaveLength(2);
    expect(exchanges[0]?.request.headers.authorization).toBe('[REDACTED]');
    expect(exchanges[0]?.request.url).toMatch(/\/v1\/chat\/completions$/);
    expect((exchanges[0]?.request.body as { tools: unknown[] }).tools).toHaveLength(1);
    expect(exchanges[0]?.response.status).toBe(200);
    expect(exchanges[0]?.response.body).toContain('data: ');
    expect(exchanges[1]?.response.body).toContain('shipped');
  });

  for (const api of ['openai-chat', 'anthropic-messages', 'gemini', 'openai-responses'] as ModelApi[]) {
    it(`plays back over the ${api} wire; a changed agent's first differing request is reported`, async () => {
      const { file, model, text: said } = await record(api);
      expect(await readFile(file, 'utf8')).not.toContain(KEY);
      const server = await startFixtureServer({ fixture: file });
      closing.push(server);
      const base = api === 'openai-chat' || api === 'openai-responses' ? server.url : server.origin;
      const same = await new Agent({ model: model(base), tools: [lookup(() => 'shipped')] }).run('where is order 42?');
      expect(same.text).toBe(said);
      expect([server.divergence, server.served, server.left]).toEqual([undefined, 2, 0]);

      // The tool now answers otherwise: the second request carries another tool result.
      const again = await startFixtureServer({ fixture: file });
      closing.push(again);
      const changedBase = api === 'openai-chat' || api === 'openai-responses' ? again.url : again.origin;
      const changed = await new Agent({ model: model(changedBase), tools: [lookup(() => 'lost')] }).run('where is order 42?');
      expect(changed.status).toBe('failed');
      expect(again.divergence).toMatchObject({
        request: 2,
        actual: expect.stringContaining('lost'),
        expected: expect.stringContaining('shipped'),
      });
      expect(again.divergence?.message).toMatch(/^request 2 differs from the recording at \S+: expected .*shipped.*, got .*lost/);
      expect(changed.error?.message).toContain(again.divergence?.message);
    });
  }

  it('drives a test in process with replayModel, through the same adapter', async () => {
    const { file, model, text: said } = await record('openai-chat');
    const replay = replayModel(loadFixture(file));
    const same = await new Agent({ model: model('http://127.0.0.1:9/v1'), tools: [lookup(() => 'shipped')], streamFn: replay }).run(
      'where is order 42?',
    );
    expect(same.text).toBe(said);
    expect(replay.divergence).toBeUndefined();
    const changedReplay = replayModel(loadFixture(file));
    const changed = await new Agent({
      model: model('http://127.0.0.1:9/v1'),
      tools: [lookup(() => 'shipped')],
      streamFn: changedReplay,
    }).run('where is order 43?');
    expect(changed.status).toBe('failed');
    expect(changedReplay.divergence).toMatchObject({
      request: 1,
      at: 'messages[0].content',
      expected: '"where is order 42?"',
      actual: '"where is order 43?"',
    });
  });

  it('a file that is not a fixture is refused saying what it must be', () => {
    expect(() => parseFixture('[]', 'x.json')).toThrow(
      /x\.json is not a rein fixture: its first line must be \{"rein":"fixture","version":1\}/,
    );
    expect(() => parseFixture('{"rein":"fixture","version":1}\n{"api":"soap"}', 'f')).toThrow(
      /f, line 2: "api" must be one of openai-chat/,
    );
    expect(() => loadFixture(join(dir, 'missing.jsonl'))).toThrow(/no such fixture file/);
    expect(firstDifference({ a: [1, { b: 2 }] }, { a: [1, { b: 3 }] }, '')).toEqual({ path: 'a[1].b', expected: '2', actual: '3' });
  });
});
