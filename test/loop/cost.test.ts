import { describe, expect, it } from 'vitest';
import { Agent } from '../../src/loop/agent.js';
import { addTool, collect, setup } from './helpers.js';

const usage = { prompt_tokens: 200_000, completion_tokens: 50_000, total_tokens: 250_000 };
// USD per million tokens: 200k in at $3 + 50k out at $15 = $0.60 + $0.75.
const pricing = { input: 3, output: 15 };

describe('cost in USD', () => {
  it('each usage event carries its cost, and the run totals it', async () => {
    let n = 0;
    const { agent } = await setup(
      () => (n++ < 2 ? { toolCalls: [{ name: 'add', arguments: { a: n, b: 1 } }], usage } : { text: 'done', usage }),
      {
        tools: [addTool],
        modelInfo: { pricing },
      },
    );
    const { events, result } = await collect(agent.run('add'));
    const costs = events.flatMap((e) => (e.type === 'assistant_message' ? [e.message.usage.cost?.total] : []));
    expect(costs).toEqual([1.35, 1.35, 1.35].map((c) => expect.closeTo(c, 10)));
    expect(result.totals.usage.cost?.total).toBeCloseTo(4.05, 10);
    expect(result.totals.usage.cost).toMatchObject({ input: expect.closeTo(1.8, 10), output: expect.closeTo(2.25, 10) });
  });

  it('a budget in USD stops the run once it is spent', async () => {
    let n = 0;
    const { agent } = await setup(() => ({ toolCalls: [{ name: 'add', arguments: { a: n++, b: 1 } }], usage }), {
      tools: [addTool],
      modelInfo: { pricing },
      limits: { maxCostUsd: 2 },
    });
    const result = await agent.run('spend');
    expect(result).toMatchObject({ status: 'stopped', reason: 'budget' });
    expect(result.totals.steps).toBe(2);
    expect(result.totals.usage.cost?.total).toBeCloseTo(2.7, 10);
  });

  it('a USD budget for a model without a price is a configuration error that says what to give', () => {
    expect(
      () =>
        new Agent({
          model: { provider: 'scripted', id: 'x', api: 'openai-chat', baseUrl: 'http://127.0.0.1:9/v1' },
          limits: { maxCostUsd: 1 },
        }),
    ).toThrow(/no price for scripted\/x: give one as modelInfo/);
  });

  it('a catalog model is priced without any configuration', () => {
    const agent = new Agent({ model: 'openai/gpt-4o-mini', modelConfig: { baseUrl: 'http://127.0.0.1:9/v1' }, limits: { maxCostUsd: 1 } });
    expect(agent.model.id).toBe('gpt-4o-mini');
  });
});
