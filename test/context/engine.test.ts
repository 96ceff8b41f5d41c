import { describe, expect, it } from 'vitest';
import { createContextEngine, type ContextCompactedEvent, type TurnContext } from '../../src/context/engine.js';
import { CONTEXT_BLOCK_HEADER } from '../../src/context/layers.js';
import type { ContextOptions } from '../../src/context/options.js';
import { isSummaryMessage, isSummaryRequest } from '../../src/context/summary.js';
import { ReinError } from '../../src/errors.js';
import { EventStream } from '../../src/model/event-stream.js';
import type {
  AssistantMessage,
  AssistantStreamEvent,
  Context,
  Message,
  ModelRef,
  StreamFunction,
  ToolResultMessage,
  ToolSpec,
} from '../../src/model/types.js';
import { emptyUsage } from '../../src/model/types.js';

const model: ModelRef = { provider: 'ollama', id: 'llama3.1', api: 'openai-chat', baseUrl: 'http://127.0.0.1:1/v1' };
const tools: ToolSpec[] = [
  { name: 'step', description: 'Does a step.', parameters: { type: 'object', properties: { n: { type: 'integer' } } } },
];

/** A summary model that answers every request with `text`, recording what it was asked. */
function summarizer(text = 'SUMMARY') {
  const requests: Context[] = [];
  const stream: StreamFunction = (m, context) => {
    requests.push(context);
    const out = new EventStream<AssistantStreamEvent, AssistantMessage>();
    const message: AssistantMessage = {
      role: 'assistant',
      content: [{ type: 'text', text }],
      stopReason: 'stop',
      usage: { ...emptyUsage(), input: 100, output: 5, total: 105 },
      provider: m.provider,
      model: m.id,
    };
    out.push({ type: 'done', message });
    out.end(message);
    return out;
  };
  return { stream, requests };
}

function engine(options: ContextOptions = {}, window = 100_000, system: string | undefined = 'Be brief.', ref: ModelRef = model) {
  const summary = summarizer();
  const context = createContextEngine(options, {
    model: ref,
    stream: summary.stream,
    wrapStream: (fn) => fn,
    ...(system === undefined ? {} : { system }),
    modelInfo: { contextWindow: window },
  });
  const events: ContextCompactedEvent[] = [];
  const turn = (step = 1): TurnContext => ({ step, signal: new AbortController().signal, onCompacted: (event) => events.push(event) });
  return { context, summary, events, turn };
}

const toolTurn = (n: number, size = 10): [AssistantMessage, ToolResultMessage] => [
  {
    role: 'assistant',
    content: [{ type: 'tool_call', id: `c${n}`, name: 'step', arguments: { n }, rawArguments: JSON.stringify({ n }) }],
    stopReason: 'tool_use',
    usage: emptyUsage(),
    provider: 'ollama',
    model: 'llama3.1',
  },
  { role: 'tool', toolCallId: `c${n}`, toolName: 'step', content: [{ type: 'text', text: `result ${n} `.repeat(size) }], isError: false },
];
const historyOf = (turns: number, size = 10): Message[] => [
  { role: 'user', content: 'Do the steps.' },
  ...Array.from({ length: turns }, (_, i) => toolTurn(i + 1, size)).flat(),
];

describe('assembling a request', () => {
  it('joins system prompt, rules and skills into system; task and memory go in one context message at the end', async () => {
    const { context, turn } = engine({
      rules: () => 'RULES',
      skills: async () => 'SKILLS',
      task: 'always',
      memory: { retrieve: () => [{ text: 'MEMORY' }] },
    });
    const run = context.startRun({ input: { role: 'user', content: 'Do the steps.' } });
    const history = historyOf(2);
    await run.prepare(history, tools, turn());
    const request = run.assemble(history, tools);
    expect(request.system).toBe('Be brief.\n\nRULES\n\nSKILLS');
    expect(request.tools).toBe(tools);
    expect(request.messages.slice(0, -1)).toEqual(history);
    const block = String(request.messages.at(-1)?.content);
    expect(block.startsWith(CONTEXT_BLOCK_HEADER)).toBe(true);
    expect(block.indexOf('## Task')).toBeLessThan(block.indexOf('## Relevant memory'));
    expect(block).toContain('Goal: Do the steps.');
    expect(block).toContain('2. step(n=2)');
  });

  it('memory hits stop at maxChars, best first; the best one is always shown, cut if it must be', async () => {
    const hits = [{ text: 'A'.repeat(300), source: 'memory 1' }, { text: 'B'.repeat(300) }, { text: 'C'.repeat(300) }];
    const { context, turn } = engine({ memory: { retrieve: () => hits, maxChars: 800 } });
    const run = context.startRun({ input: { role: 'user', content: 'Do the steps.' } });
    const history = historyOf(1);
    await run.prepare(history, tools, turn());
    const block = String(run.assemble(history, tools).messages.at(-1)?.content);
    expect(block).toContain(`- ${'A'.repeat(300)} (memory 1)`);
    expect(block).toContain('B'.repeat(300));
    expect(block).not.toContain('CCCC');
    const { context: tight, turn: tightTurn } = engine({ memory: { retrieve: () => hits, maxChars: 200 } });
    const tightRun = tight.startRun({ input: { role: 'user', content: 'Do the steps.' } });
    await tightRun.prepare(history, tools, tightTurn());
    const cut = String(tightRun.assemble(history, tools).messages.at(-1)?.content);
    expect(cut).toContain('AAAA');
    expect(cut).not.toContain('BBBB');
  });

  it("puts the context message before the user's latest words, never between a call and its result", async () => {
    const { context, turn } = engine({ task: 'always' });
    const run = context.startRun({ input: { role: 'user', content: 'go' } });
    const first: Message[] = [{ role: 'user', content: 'go' }];
    await run.prepare(first, tools, turn());
    expect(run.assemble(first, tools).messages.map((m) => m.role)).toEqual(['user', 'user']);
    expect(run.assemble(first, tools).messages[1]).toBe(first[0]);
    const later = [...first, ...toolTurn(1)];
    await run.prepare(later, tools, turn(2));
    expect(run.assemble(later, tools).messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'user']);
  });

  it('never changes the history it is given, and sends it as is when there are no per-turn layers', async () => {
    const { context, turn } = engine({ task: 'always', memory: { retrieve: () => [{ text: 'm' }] } });
    const run = context.startRun({ input: { role: 'user', content: 'go' } });
    const history = historyOf(5);
    const frozen = structuredClone(history);
    const items = [...history];
    await run.prepare(history, tools, turn());
    run.assemble(history, tools);
    expect(history).toEqual(frozen);
    expect(history).toHaveLength(items.length);
    history.forEach((m, i) => expect(m).toBe(items[i]));

    const bare = engine().context.startRun({ input: { role: 'user', content: 'go' } });
    await bare.prepare(history, tools, turn());
    expect(bare.assemble(history, tools).messages).toBe(history);
  });

  it('lets a hook add, remove and rewrite layers', async () => {
    const { context, turn } = engine({
      rules: 'RULES',
      layers: (layers, info) => [
        ...layers.filter((l) => l.id !== 'rules').map((l) => (l.id === 'system' ? { ...l, text: `${l.text} (step ${info.step})` } : l)),
        { id: 'reminder', role: 'user', text: 'Remember to run the tests.' },
      ],
    });
    const run = context.startRun({ input: { role: 'user', content: 'go' } });
    const history = historyOf(1);
    await run.prepare(history, tools, turn(7));
    const request = run.assemble(history, tools);
    expect(request.system).toBe('Be brief. (step 7)');
    expect(String(request.messages.at(-1)?.content)).toContain('Remember to run the tests.');
  });

  it("retrieves memory only when the user's latest input changes, and leaves out low scores", async () => {
    const queries: string[] = [];
    const { context, turn } = engine({
      memory: {
        retrieve: (q) => (
          queries.push(q),
          [
            { text: 'hit', score: 0.9 },
            { text: 'miss', score: 0.1 },
          ]
        ),
        minScore: 0.5,
      },
    });
    const run = context.startRun({ input: { role: 'user', content: 'first question' } });
    const history: Message[] = [{ role: 'user', content: 'first question' }];
    for (let n = 1; n <= 3; n++) {
      await run.prepare(history, tools, turn(n));
      const block = String(run.assemble(history, tools).messages.find((m) => String(m.content).startsWith(CONTEXT_BLOCK_HEADER))?.content);
      expect(block).toContain('- hit');
      expect(block).not.toContain('miss');
      history.push(...toolTurn(n));
    }
    history.push({ role: 'user', content: 'second question' });
    await run.prepare(history, tools, turn(4));
    expect(queries).toEqual(['first question', 'second question']);
  });
});

describe('cost per turn', () => {
  it("counts only the messages added since the last turn, whatever the history's length", async () => {
    for (const size of [10, 1_000]) {
      const { context, turn } = engine({ task: 'always', memory: { retrieve: () => [{ text: 'm' }] } }, 10_000_000);
      const counter = context.setup.counter;
      const count = counter.message.bind(counter);
      let counted = 0;
      counter.message = (m) => (counted++, count(m));
      const run = context.startRun({ input: { role: 'user', content: 'go' } });
      const history = historyOf(size);
      await run.prepare(history, tools, turn());
      run.assemble(history, tools);
      const before = counted;
      let sent: Message[] | undefined;
      for (let n = 1; n <= 20; n++) {
        history.push(...toolTurn(size + n));
        await run.prepare(history, tools, turn(n + 1));
        const messages = run.assemble(history, tools).messages;
        // The same request array, extended in place rather than copied.
        if (sent) expect(messages).toBe(sent);
        sent = messages;
        expect(messages.length).toBe(history.length + 1);
      }
      // Two new messages per turn and the one context message, at 10 turns as at 1,000.
      expect(counted - before).toBe(20 * 3);
    }
  });
});

describe("a transformContext hook's new array each turn", () => {
  it('is counted from the counts of the messages it shares with earlier arrays', async () => {
    const { context, turn } = engine();
    const counter = context.setup.counter;
    const count = counter.message.bind(counter);
    let counted = 0;
    counter.message = (m) => (counted++, count(m));
    const run = context.startRun({ input: { role: 'user', content: 'go' } });
    const history = historyOf(200);
    const sent = (): Context => run.assemble(history.slice(-50), tools);
    await run.prepare(history, tools, turn());
    sent();
    const before = counted;
    for (let n = 1; n <= 10; n++) {
      history.push(...toolTurn(200 + n));
      await run.prepare(history, tools, turn(n + 1));
      expect(sent().messages).toHaveLength(50);
    }
    // Each turn: the two new messages once for the history, once for the hook's array.
    expect(counted - before).toBe(10 * 4);
  });
});

describe('compaction in the engine', () => {
  it('replaces the oldest turns with the summary in place, keeps the last 5, and reports tokens before and after', async () => {
    const { context, events, summary, turn } = engine({ summaryMaxTokens: 100, summaryOptions: { maxTokens: 200 } }, 10_000);
    const run = context.startRun({ input: { role: 'user', content: 'Do the steps.' } });
    const history = historyOf(180);
    const tail = history.slice(-10);
    await run.prepare(history, tools, turn(41));
    expect(events).toHaveLength(1);
    const [event] = events;
    expect(event).toMatchObject({
      type: 'context_compacted',
      step: 41,
      reason: 'threshold',
      removedMessages: 351,
      keptMessages: 10,
      keptTurns: 5,
      summarizer: 'model',
      summaryModel: 'ollama/llama3.1',
    });
    expect(event!.tokensAfter).toBeLessThan(event!.tokensBefore);
    expect(event!.tokensBefore).toBeGreaterThanOrEqual(7_000);
    expect(history).toHaveLength(11);
    expect(isSummaryMessage(history[0])).toBe(true);
    expect(String(history[0]!.content)).toContain('SUMMARY');
    history.slice(1).forEach((m, i) => expect(m).toBe(tail[i]));
    expect(summary.requests).toHaveLength(1);
    expect(isSummaryRequest(summary.requests[0]!)).toBe(true);
    const prompt = String(summary.requests[0]!.messages[0]!.content);
    for (let n = 1; n <= 175; n++) expect(prompt).toContain(`[call step c${n}] {"n":${n}}`);
    expect(prompt).not.toContain('[call step c176]');
    // The task layer now shows every step, the compacted ones included.
    const block = String(run.assemble(history, tools).messages.at(-1)?.content);
    expect(block).toContain('Completed steps (180; the last 10 listed)');
  });

  it('throws context_overflow, saying what to do, when even the compacted request cannot fit', async () => {
    const { context, turn } = engine({}, 1_000, 'Rules. '.repeat(1_000));
    const run = context.startRun({ input: { role: 'user', content: 'go' } });
    const error = await Promise.resolve(run.prepare(historyOf(3), tools, turn())).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReinError);
    expect(error).toMatchObject({ code: 'context_overflow', kind: 'fatal' });
    expect((error as Error).message).toMatch(/1000-token window.*To make it fit, shorten the system prompt/);
  });

  it('says the output reserve is the cause when the request alone would fit, and how low it must go', async () => {
    const summary = summarizer();
    const context = createContextEngine(
      {},
      {
        model,
        stream: summary.stream,
        wrapStream: (fn) => fn,
        modelInfo: { contextWindow: 128_000 },
        modelOptions: { maxTokens: 200_000 },
      },
    );
    const run = context.startRun({ input: { role: 'user', content: 'hello' } });
    const turn: TurnContext = { step: 1, signal: new AbortController().signal, onCompacted: () => {} };
    const error = await Promise.resolve(run.prepare([{ role: 'user', content: 'hello' }], tools, turn)).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'context_overflow' });
    const message = (error as Error).message;
    expect(message).toMatch(
      /^the next request is about \d+ tokens, and 200000 more are kept for the answer \(modelOptions\.maxTokens; --max-output-tokens in the CLI\): together more than the 128000-token window of ollama\/llama3\.1/,
    );
    expect(message).toMatch(/Lower the answer's reserve: this request leaves room for at most 12\d{4}$/);
    // Nothing was compacted, and shortening prompts would not help: neither is said.
    expect(message).not.toMatch(/even after compaction|maxToolOutputChars/);
  });

  it('after a context-length error, takes the window to be smaller than the refused request', async () => {
    const { context, events, turn } = engine({ summaryMaxTokens: 100 }, 100_000);
    const run = context.startRun({ input: { role: 'user', content: 'go' } });
    const history = historyOf(20, 40);
    await run.prepare(history, tools, turn());
    run.assemble(history, tools);
    expect(await run.recover(history, tools, turn())).toBe(true);
    expect(events[0]).toMatchObject({ reason: 'context_length', keptTurns: 5 });
    // Growing back to the refused size compacts again, on its own.
    for (let n = 21; n <= 40; n++) history.push(...toolTurn(n, 40));
    await run.prepare(history, tools, turn(2));
    expect(events).toHaveLength(2);
    expect(events[1]?.reason).toBe('threshold');
  });

  it("learns the provider's token ratio from each response", async () => {
    const { context, turn } = engine();
    const run = context.startRun({ input: { role: 'user', content: 'go' } });
    const history = historyOf(3);
    await run.prepare(history, tools, turn());
    const request = run.assemble(history, tools);
    const response: AssistantMessage = {
      role: 'assistant',
      content: [],
      stopReason: 'stop',
      usage: { ...emptyUsage(), input: 10_000 },
      provider: 'ollama',
      model: 'llama3.1',
    };
    run.observe(request, response);
    expect(context.setup.counter.ratio).toBeGreaterThan(1.5);
  });

  it('loads the real tokenizer of an OpenAI model before deciding at the threshold', async () => {
    const openai: ModelRef = { provider: 'openai', id: 'gpt-4o', api: 'openai-chat', baseUrl: 'http://127.0.0.1:1/v1' };
    const { context, turn } = engine({}, 2_000, undefined, openai);
    const run = context.startRun({ input: { role: 'user', content: 'go' } });
    await run.prepare(historyOf(2), tools, turn());
    expect(context.setup.counter.method).toBe('estimate');
    await run.prepare(historyOf(40), tools, turn());
    expect(context.setup.counter.method).toBe('o200k_base');
  });
});

describe('options', () => {
  it('are checked when the agent is built, naming the option', () => {
    expect(() => engine({ threshold: 1.5 })).toThrow(/context\.threshold is 1\.5/);
    expect(() => engine({ keepTurns: 0 })).toThrow(/context\.keepTurns/);
    expect(() => engine({ summaryMaxTokens: 10 })).toThrow(/context\.summaryMaxTokens/);
    expect(() => engine({ summaryModel: 'nope/x' })).toThrow(/Unknown model provider "nope"/);
  });
});
