// A tool with typed parameters, a declared risk and effect, data for programs beside the
// text for the model, and the two ways a call can fail: arguments the schema refuses, and
// an error the tool throws. Both reach the model as error results it can act on; the run
// goes on.
import { Agent, defineTool, jsonSchema, toolResultText } from 'rein';
import { startScriptedServer } from 'rein/testing';

const prices: Record<string, number> = { apple: 0.5, pear: 0.75 };

const quote = defineTool({
  name: 'quote',
  description: 'The price of some pieces of fruit, in euros. Use it before answering about prices.',
  parameters: jsonSchema<{ fruit: string; count: number }>({
    type: 'object',
    properties: { fruit: { type: 'string' }, count: { type: 'integer', minimum: 1 } },
    required: ['fruit', 'count'],
  }),
  risk: 'read', // reads only: a permission policy lets it run without asking
  effect: 'pure', // running it twice changes nothing: a resume may run it again
  execute: ({ fruit, count }, ctx) => {
    const price = prices[fruit];
    // A thrown error becomes an error result naming the tool; the model reads the message.
    if (price === undefined) throw new Error(`no price for "${fruit}"; known: ${Object.keys(prices).join(', ')}`);
    ctx.log('quoted', { fruit, count });
    return { content: `${count} × ${fruit} = €${(price * count).toFixed(2)}`, details: { unit: price, total: price * count } };
  },
});

// The scripted model makes each mistake once, then gets it right.
const server = await startScriptedServer({
  script: [
    { toolCalls: [{ name: 'quote', arguments: { fruit: 'apple', count: 'three' } }] },
    { toolCalls: [{ name: 'quote', arguments: { fruit: 'banana', count: 3 } }] },
    { toolCalls: [{ name: 'quote', arguments: { fruit: 'apple', count: '3' } }] },
    { text: 'Three apples cost €1.50.' },
  ],
});
try {
  const agent = new Agent({
    model: server.model(),
    tools: [quote],
    log: (message, data) => console.log(`log: ${message} ${JSON.stringify(data)}`),
  });
  const run = agent.run('How much are three apples?');
  run.subscribe((event) => {
    if (event.type === 'tool_started') console.log(`call: ${event.name} ${JSON.stringify(event.arguments)}`);
    if (event.type === 'tool_finished') {
      const text = toolResultText(event.result.content);
      console.log(`${event.result.isError ? `error (${event.errorCode})` : 'result'}: ${text.split('\n')[0]}`);
      if (event.result.details !== undefined && !event.result.isError) console.log(`details: ${JSON.stringify(event.result.details)}`);
    }
  });
  const result = await run;
  console.log(`answer: ${result.text}`);
  console.log(`${result.reason} after ${result.totals.steps} steps`);
} finally {
  await server.close();
}
