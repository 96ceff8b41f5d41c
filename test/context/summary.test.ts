import { describe, expect, it } from 'vitest';
import {
  buildSummaryRequest,
  capTokens,
  isSummaryMessage,
  isSummaryRequest,
  mechanicalSummary,
  renderTranscript,
  requestSummary,
  summaryMessage,
} from '../../src/context/summary.js';
import { createTokenCounter, estimateTokens } from '../../src/context/tokens.js';
import { EventStream } from '../../src/model/event-stream.js';
import type { AssistantMessage, AssistantStreamEvent, Context, Message, ModelRef, StreamFunction } from '../../src/model/types.js';
import { emptyUsage } from '../../src/model/types.js';

const model: ModelRef = { provider: 'ollama', id: 'llama3.1', api: 'openai-chat', baseUrl: 'http://127.0.0.1:1/v1' };
const counter = () => createTokenCounter(model);

const removed: Message[] = [
  summaryMessage('Earlier: the repo was cloned.'),
  { role: 'user', content: 'Now fix the failing test.' },
  {
    role: 'assistant',
    content: [
      { type: 'text', text: 'Running the tests to see which fails.' },
      { type: 'tool_call', id: 'c1', name: 'run', arguments: { cmd: 'npm test' }, rawArguments: '{"cmd":"npm test"}' },
    ],
    stopReason: 'tool_use',
    usage: emptyUsage(),
    provider: 'p',
    model: 'm',
  },
  {
    role: 'tool',
    toolCallId: 'c1',
    toolName: 'run',
    content: [{ type: 'text', text: 'FAIL src/a.test.ts: expected 2, got 3' }],
    isError: true,
  },
];

/** A stream function answering with `message` (or `error`), recording the contexts it got. */
function answering(message: Partial<AssistantMessage>, seen: Context[] = []): StreamFunction {
  return (m, context) => {
    seen.push(context);
    const out = new EventStream<AssistantStreamEvent, AssistantMessage>();
    const full: AssistantMessage = {
      role: 'assistant',
      content: [],
      stopReason: 'stop',
      usage: { ...emptyUsage(), input: 50, output: 10, total: 60 },
      provider: m.provider,
      model: m.id,
      ...message,
    };
    out.push(
      full.stopReason === 'error'
        ? ({ type: 'error', error: new Error('x'), message: full } as unknown as AssistantStreamEvent)
        : { type: 'done', message: full },
    );
    out.end(full);
    return out;
  };
}

describe('the summary request', () => {
  it('asks for what was called, what came back and why, files and decisions, within the cap', () => {
    const request = buildSummaryRequest({
      removed,
      goal: 'Make CI green',
      steps: ['run(cmd=npm test) → error: FAIL src/a.test.ts'],
      maxTokens: 300,
      budget: 50_000,
      count: estimateTokens,
    });
    expect(isSummaryRequest(request)).toBe(true);
    expect(request.tools).toBeUndefined();
    expect(request.messages).toHaveLength(1);
    const prompt = String(request.messages[0]!.content);
    expect(prompt).toContain('at most 300 tokens');
    expect(prompt).toMatch(/what was called.*what came back.*why/);
    expect(prompt).toContain('files touched');
    expect(prompt).toContain('decisions');
    expect(prompt).toContain('Goal of the run: Make CI green');
    expect(prompt).toContain('1. run(cmd=npm test) → error: FAIL src/a.test.ts');
    expect(prompt).toContain('[earlier summary]\nEarlier: the repo was cloned.');
    expect(prompt).toContain('[user]\nNow fix the failing test.');
    expect(prompt).toContain('[assistant]\nRunning the tests to see which fails.');
    expect(prompt).toContain('[call run c1] {"cmd":"npm test"}');
    expect(prompt).toContain('[result of run c1, error]\nFAIL src/a.test.ts: expected 2, got 3');
  });

  it('shortens long parts until the transcript fits, then leaves out the oldest messages but keeps the earlier summary', () => {
    const big: Message[] = [
      { role: 'user', content: 'Read it all.' },
      { role: 'tool', toolCallId: 'c', toolName: 'read', content: [{ type: 'text', text: 'x '.repeat(20_000) }], isError: false },
    ];
    const text = renderTranscript(big, 800, estimateTokens);
    expect(estimateTokens(text)).toBeLessThanOrEqual(800);
    expect(text).toContain('[user]\nRead it all.');
    expect(text).toContain('…');

    const many: Message[] = [
      summaryMessage('Earlier: cloned.'),
      ...Array.from({ length: 200 }, (_, i): Message => ({ role: 'user', content: `message ${i} `.repeat(30) })),
    ];
    const cut = renderTranscript(many, 2_000, estimateTokens);
    expect(estimateTokens(cut)).toBeLessThanOrEqual(2_000);
    expect(cut.startsWith('[earlier summary]\nEarlier: cloned.')).toBe(true);
    expect(cut).toMatch(/\[\d+ older messages left out to fit the summary model/);
    expect(cut).toContain('message 199');
    expect(cut).not.toContain('message 0 ');
  });

  it('keeps the request within its budget: the newest steps when the record is too long', () => {
    const steps = Array.from({ length: 500 }, (_, i) => `run(cmd=step ${i + 1}) → "ok"`);
    const request = buildSummaryRequest({ removed, goal: 'g', steps, maxTokens: 100, budget: 3_000, count: estimateTokens });
    const prompt = String(request.messages[0]!.content);
    expect(estimateTokens(prompt)).toBeLessThanOrEqual(3_000);
    expect(prompt).toContain('500. run(cmd=step 500)');
    expect(prompt).toMatch(/\(\d+ earlier steps left out for space\)/);
    expect(prompt).toContain('[call run c1]');
  });
});

describe('asking the summary model', () => {
  it('returns its text, capped at the limit when the model ignores it', async () => {
    const seen: Context[] = [];
    const long = 'The build failed because of a missing import. '.repeat(200);
    const outcome = await requestSummary(
      answering({ content: [{ type: 'text', text: long }] }, seen),
      model,
      { messages: [] },
      { maxTokens: 100, counter: counter(), streamOptions: {} },
    );
    expect(outcome.ok).toBe(true);
    if (!outcome.ok) return;
    expect(counter().text(outcome.text)).toBeLessThanOrEqual(100);
    expect(outcome.text).toMatch(/\[summary cut to its size limit\]$/);
    expect(outcome.response.usage.input).toBe(50);
    expect(seen).toHaveLength(1);
  });

  it('reports a failed call or an empty answer instead of throwing', async () => {
    const failed = await requestSummary(
      answering({ stopReason: 'error', error: { name: 'ReinError', code: 'server_error', kind: 'transient', message: 'boom' } }),
      model,
      { messages: [] },
      { maxTokens: 100, counter: counter(), streamOptions: {} },
    );
    expect(failed).toMatchObject({ ok: false, error: { code: 'server_error' } });
    const empty = await requestSummary(
      answering({ content: [] }),
      model,
      { messages: [] },
      { maxTokens: 100, counter: counter(), streamOptions: {} },
    );
    expect(empty).toMatchObject({ ok: false, error: { code: 'invalid_response' } });
    const throwing: StreamFunction = () => {
      throw new Error('no network');
    };
    expect(
      await requestSummary(throwing, model, { messages: [] }, { maxTokens: 100, counter: counter(), streamOptions: {} }),
    ).toMatchObject({ ok: false });
  });
});

describe('the summary rein writes itself', () => {
  it('keeps the earlier summary and the newest steps that fit the cap', () => {
    const steps = Array.from({ length: 200 }, (_, i) => `run(cmd=step ${i + 1}) → "ok"`);
    const c = counter();
    const text = mechanicalSummary({ previous: 'Earlier: cloned.', steps, maxTokens: 300, counter: c, reason: 'server_error' });
    expect(c.text(text)).toBeLessThanOrEqual(300);
    expect(text).toContain('Earlier: cloned.');
    expect(text).toContain('the summary model failed, server_error');
    expect(text).toContain('step 200)');
    expect(text).not.toContain('step 1)');
    expect(text).toMatch(/the first \d+ left out for space/);
  });
});

describe('summary messages', () => {
  it('are user messages rein recognizes as its own', () => {
    const message = summaryMessage('  All good.  ');
    expect(message.role).toBe('user');
    expect(isSummaryMessage(message)).toBe(true);
    expect(String(message.content).endsWith('All good.')).toBe(true);
    expect(isSummaryMessage({ role: 'user', content: 'All good.' })).toBe(false);
  });

  it('capTokens leaves short text alone', () => {
    expect(capTokens('short', 100, counter())).toBe('short');
  });
});
