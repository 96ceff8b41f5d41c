// The README's library example, run against the scripted model server instead of OpenAI.
import { expect, it } from 'vitest';
import { Agent, defineTool } from '../src/index.js';
import { startScriptedServer } from '../src/model/scripted/index.js';

it('the README library example works as written', async () => {
  const server = await startScriptedServer({
    script: [{ toolCalls: [{ name: 'add', arguments: { a: 2, b: 40 } }] }, { toolCalls: [{ name: 'add', arguments: { a: 42, b: 8 } }] }, { text: 'It is 50.' }],
  });
  try {
    const add = defineTool({
      name: 'add',
      description: 'Add two numbers. Use it for every addition.',
      parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
      execute: ({ a, b }) => String(Number(a) + Number(b)),
    });

    const agent = new Agent({ model: server.model(), system: 'Be brief.', tools: [add], limits: { maxSteps: 10 } });
    const run = agent.run('What is 2 + 40, plus 8?');
    let streamed = '';
    for await (const event of run) if (event.type === 'text_delta') streamed += event.delta;
    const result = await run;
    expect(streamed).toBe('It is 50.');
    expect(result).toMatchObject({ status: 'done', reason: 'final_answer', text: 'It is 50.', totals: { steps: 3, toolCalls: 2 } });
    expect(server.requests[0]!.messages[0]).toEqual({ role: 'system', content: 'Be brief.' });
  } finally {
    await server.close();
  }
});
