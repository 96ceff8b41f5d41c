import { afterEach, describe, expect, it } from 'vitest';
import { addTool, setup } from '../loop/helpers.js';
import { text, toolCall } from '../../src/model/scripted/index.js';
import { memoryOtel, tree } from './otel.js';

const otels: Array<ReturnType<typeof memoryOtel>> = [];
afterEach(async () => {
  await Promise.all(otels.splice(0).map((o) => o.close()));
});
function otel() {
  const o = memoryOtel();
  otels.push(o);
  return o;
}

describe('spans of a run', () => {
  it('a run with parallel tools: invoke_agent with chat and execute_tool children', async () => {
    const o = otel();
    const { agent } = await setup([toolCall('add', { a: 1, b: 2 }), text('3')], { tools: [addTool], telemetry: { tracerProvider: o.tracerProvider, meterProvider: o.meterProvider, agentName: 'adder' } });
    const result = await agent.run('add');
    expect(result.reason).toBe('final_answer');
    console.log(tree(o.spans()));
    console.log(o.spans().map((s) => [s.name, s.attributes]));
  });
});
