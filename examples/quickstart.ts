import { Agent, defineTool, jsonSchema, toolResultText } from 'rein';
import { startScriptedServer } from 'rein/testing';

const add = defineTool({
  name: 'add',
  description: 'Add two numbers. Use it for every addition.',
  parameters: jsonSchema<{ a: number; b: number }>({
    type: 'object',
    properties: { a: { type: 'number' }, b: { type: 'number' } },
    required: ['a', 'b'],
  }),
  execute: ({ a, b }) => String(a + b),
});

// A scripted model: it calls `add` twice, then answers. For a real one, use
// model: 'openai/gpt-4o-mini' (and OPENAI_API_KEY) instead of server.model().
const server = await startScriptedServer({
  script: [
    { toolCalls: [{ name: 'add', arguments: { a: 2, b: 40 } }] },
    { toolCalls: [{ name: 'add', arguments: { a: 42, b: 8 } }] },
    { text: 'It is 50.' },
  ],
});
try {
  const agent = new Agent({ model: server.model(), system: 'Be brief.', tools: [add], limits: { maxSteps: 10 } });
  const run = agent.run('What is 2 + 40, plus 8?');
  for await (const event of run) {
    if (event.type === 'tool_finished') console.log(`${event.name} → ${toolResultText(event.result.content)}`);
    if (event.type === 'text_delta') process.stdout.write(event.delta);
  }
  const result = await run; // { status, reason, text, messages, totals: { steps, toolCalls, usage, durationMs } }
  console.log(
    `\n${result.status} (${result.reason}): ${JSON.stringify(result.text)} after ${result.totals.steps} steps, ${result.totals.toolCalls} tool calls`,
  );
  console.log('the model was sent:', server.requests[0]?.messages[0]);
} finally {
  await server.close();
}
