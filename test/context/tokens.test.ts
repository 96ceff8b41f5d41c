import { describe, expect, it } from 'vitest';
import { createTokenCounter, encodingFor, estimateTokens, IMAGE_TOKENS } from '../../src/context/tokens.js';
import type { AssistantMessage, Message, ModelRef, ToolSpec } from '../../src/model/types.js';
import { emptyUsage } from '../../src/model/types.js';

const model = (provider: string, id: string, api: ModelRef['api'] = 'openai-chat'): ModelRef => ({
  provider,
  id,
  api,
  baseUrl: 'http://127.0.0.1:1/v1',
});

describe('which tokenizer a model gets', () => {
  it('OpenAI-family models get their real encoding; others are estimated', () => {
    expect(encodingFor(model('openai', 'gpt-4o'))).toBe('o200k_base');
    expect(encodingFor(model('openai', 'gpt-4.1-mini-2025-04-14'))).toBe('o200k_base');
    expect(encodingFor(model('openai-responses', 'o3-mini', 'openai-responses'))).toBe('o200k_base');
    expect(encodingFor(model('openai', 'gpt-5'))).toBe('o200k_base');
    expect(encodingFor(model('openai', 'gpt-4-turbo'))).toBe('cl100k_base');
    expect(encodingFor(model('openai', 'gpt-3.5-turbo'))).toBe('cl100k_base');
    expect(encodingFor(model('openrouter', 'openai/gpt-4o-mini'))).toBe('o200k_base');
    expect(encodingFor(model('openrouter', 'anthropic/claude-sonnet-4.5'))).toBeUndefined();
    expect(encodingFor(model('anthropic', 'claude-sonnet-4-5', 'anthropic-messages'))).toBeUndefined();
    expect(encodingFor(model('ollama', 'llama3.1'))).toBeUndefined();
    expect(encodingFor(model('gemini', 'gemini-2.5-pro', 'gemini'))).toBeUndefined();
  });
});

describe('counting with gpt-tokenizer', () => {
  it('o200k_base counts match the known values once loaded', async () => {
    const counter = createTokenCounter(model('openai', 'gpt-4o'));
    expect(counter.method).toBe('estimate');
    await counter.load();
    expect(counter.method).toBe('o200k_base');
    expect(counter.text('hello world')).toBe(2);
    expect(counter.text('The quick brown fox jumps over the lazy dog.')).toBe(10);
    expect(counter.text('Привет, мир! Как дела?')).toBe(8);
    expect(counter.text('日本語のテキストです。')).toBe(8);
    // Special-token text in a message is plain text to the API, not an error.
    expect(counter.text('<|endoftext|>')).toBe(7);
  });

  it('cl100k_base counts differ where the vocabularies do', async () => {
    const counter = createTokenCounter(model('openai', 'gpt-4'));
    await counter.load();
    expect(counter.method).toBe('cl100k_base');
    expect(counter.text('hello world')).toBe(2);
    expect(counter.text('Привет, мир! Как дела?')).toBe(12);
    expect(counter.text('日本語のテキストです。')).toBe(10);
  });

  it('loading the tokenizer switches to exact counts and bumps the version, so sums made from estimates are dropped', async () => {
    const counter = createTokenCounter(model('openai', 'gpt-4o'));
    const message: Message = { role: 'user', content: 'Привет, мир! Как дела? '.repeat(20) };
    const estimated = counter.message(message);
    const version = counter.version;
    await counter.load();
    expect(counter.version).toBe(version + 1);
    expect(counter.message(message)).not.toBe(estimated);
    expect(counter.message(message)).toBe(4 + counter.text(message.content as string));
  });
});

describe('the estimate for other models', () => {
  it('is within -20% / +35% of o200k_base on prose, code, JSON and CJK (overcounting is the safe side)', async () => {
    const exact = createTokenCounter(model('openai', 'gpt-4o'));
    await exact.load();
    const samples = [
      'What goes into the model each turn decides whether a long run stays on track. Users complain of runs that overflow mid-loop, ' +
        'and of compaction that exists for only one vendor. The summary keeps what was called, what came back and why, plus the files touched. '.repeat(
          10,
        ),
      'export function add(a: number, b: number): number {\n  return a + b;\n}\n'.repeat(30),
      JSON.stringify(Array.from({ length: 40 }, (_, i) => ({ id: i, name: `item ${i}`, tags: ['a', 'b'], done: i % 2 === 0 }))),
      '日本語のテキストです。これはテストです。'.repeat(30),
    ];
    for (const text of samples) {
      const ratio = estimateTokens(text) / exact.text(text);
      expect(ratio, text.slice(0, 40)).toBeGreaterThan(0.8);
      expect(ratio, text.slice(0, 40)).toBeLessThan(1.35);
    }
  });

  it('counts messages with their framing, tool calls with their arguments, images as a fixed estimate', () => {
    const counter = createTokenCounter(model('anthropic', 'claude-sonnet-4-5', 'anthropic-messages'));
    expect(counter.method).toBe('estimate');
    const assistant: AssistantMessage = {
      role: 'assistant',
      content: [
        { type: 'text', text: 'Reading it.' },
        { type: 'tool_call', id: 'c1', name: 'read_file', arguments: { path: 'a.ts' }, rawArguments: '{"path":"a.ts"}' },
      ],
      stopReason: 'tool_use',
      usage: emptyUsage(),
      provider: 'anthropic',
      model: 'claude',
    };
    expect(counter.message(assistant)).toBe(
      4 + estimateTokens('Reading it.') + 8 + estimateTokens('read_file') + estimateTokens('{"path":"a.ts"}'),
    );
    const image: Message = {
      role: 'user',
      content: [
        { type: 'text', text: 'What is this?' },
        { type: 'image', data: 'AAAA', mimeType: 'image/png' },
      ],
    };
    expect(counter.message(image)).toBe(4 + estimateTokens('What is this?') + IMAGE_TOKENS);
  });

  it('counts tool declarations once per spec', () => {
    const counter = createTokenCounter(model('ollama', 'llama3.1'));
    const specs: ToolSpec[] = [
      { name: 'add', description: 'Add two numbers.', parameters: { type: 'object', properties: { a: { type: 'number' } } } },
    ];
    const tools = counter.tools(specs);
    expect(tools).toBe(
      8 + estimateTokens('add') + estimateTokens('Add two numbers.') + estimateTokens(JSON.stringify(specs[0]!.parameters)),
    );
    // Specs are immutable once declared: a changed object is not looked at again.
    (specs[0] as { description: string }).description = 'x'.repeat(1_000);
    expect(counter.tools(specs)).toBe(tools);
    expect(counter.tools([...specs, ...specs])).toBe(2 * tools);
  });
});

describe('calibration by reported usage', () => {
  it("converges to the provider's ratio and stays clamped against absurd reports", () => {
    const counter = createTokenCounter(model('ollama', 'llama3.1'));
    expect(counter.calibrated(1_000)).toBe(1_000);
    for (let i = 0; i < 12; i++) counter.calibrate(1_000, 1_500);
    expect(counter.ratio).toBeCloseTo(1.5, 2);
    expect(counter.calibrated(2_000)).toBe(3_000);
    for (let i = 0; i < 12; i++) counter.calibrate(1_000, 900);
    expect(counter.ratio).toBeCloseTo(0.9, 2);
    for (let i = 0; i < 20; i++) counter.calibrate(100, 1_000_000);
    expect(counter.ratio).toBe(3);
    for (let i = 0; i < 20; i++) counter.calibrate(1_000_000, 1);
    expect(counter.ratio).toBe(0.4);
  });

  it('ignores responses that report no usage', () => {
    const counter = createTokenCounter(model('ollama', 'llama3.1'));
    counter.calibrate(1_000, 0);
    counter.calibrate(0, 500);
    expect(counter.ratio).toBe(1);
  });
});
