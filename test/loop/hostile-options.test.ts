// Options and listeners that would break a run later get a clear error now, or none at all:
// wrong types in modelConfig, a store that is not one, a listener that throws.
import { describe, expect, it } from 'vitest';
import { Agent } from '../../src/loop/agent.js';
import type { AgentOptions } from '../../src/loop/options.js';
import { setup } from './helpers.js';

function configError(options: Record<string, unknown>): { code?: string; message: string } | undefined {
  try {
    new Agent(options as unknown as AgentOptions);
    return undefined;
  } catch (error) {
    return error as { code?: string; message: string };
  }
}

describe('options of the wrong shape', () => {
  it('modelConfig.baseUrl, apiKey or headers of the wrong type are a config error naming the option, not a raw TypeError', () => {
    expect(configError({ model: 'openai/gpt-4o-mini', modelConfig: { baseUrl: 42, apiKey: 'k' } })).toMatchObject({
      code: 'config',
      message: 'modelConfig.baseUrl: expected a string, got 42',
    });
    expect(configError({ model: 'openai/gpt-4o-mini', modelConfig: { apiKey: ['k'] } })?.message).toMatch(
      /^modelConfig\.apiKey: expected a string, got/,
    );
    expect(configError({ model: 'openai/gpt-4o-mini', modelConfig: { apiKey: 'k', headers: { a: 1 } } })?.message).toMatch(
      /^modelConfig\.headers: expected an object of header names/,
    );
    expect(configError({ model: 'openai/gpt-4o-mini', modelConfig: 'k' })?.message).toMatch(/^modelConfig: expected an object/);
  });

  it('store: {} is refused at construction, naming the missing methods', () => {
    const error = configError({ model: 'openai/gpt-4o-mini', modelConfig: { apiKey: 'k' }, store: {} });
    expect(error).toMatchObject({ code: 'config' });
    expect(error?.message).toMatch(
      /^store: expected a run store .* with createRun, acquireLease, append, loadEvents, getRun, listRuns, updateRun, got/,
    );
  });
});

describe('a listener that throws', () => {
  it('does not reject the run: it still ends with its answer, and the error is one process warning', async () => {
    const { agent } = await setup([{ text: 'fine' }]);
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);
    try {
      const run = agent.run('hi');
      let seen = 0;
      run.subscribe(() => {
        seen++;
        throw new Error('listener bug');
      });
      const result = await run;
      expect(result).toMatchObject({ status: 'done', text: 'fine' });
      expect(seen).toBeGreaterThan(1);
      await new Promise((r) => setImmediate(r));
      const ours = warnings.filter((w) => w.name === 'ReinListenerWarning');
      expect(ours).toHaveLength(1);
      expect(ours[0]!.message).toContain('listener bug');
    } finally {
      process.off('warning', onWarning);
    }
  });
});
