// Structured output: with `outputSchema`, the model finishes by calling the `final_answer`
// tool with arguments valid against the schema (here zod; JSON Schema and TypeBox work
// too), and `result.output` is that checked JSON, typed from the schema. Answers that do
// not fit are sent back to the model, as any invalid tool call is.
import { Agent, toolResultText } from 'rein';
import { startScriptedServer, text, toolCall } from 'rein/testing';
import { z } from 'zod';

const City = z.object({
  city: z.string(),
  country: z.string(),
  population: z.number().int().positive(),
  landmarks: z.array(z.string()).min(1).max(3),
});

// The scripted model first answers in prose (rein reminds it to call final_answer), then
// sends a population that is not a number (refused, with the reason), then gets it right.
const server = await startScriptedServer({
  script: [
    text('Paris is the capital of France.'),
    toolCall('final_answer', { city: 'Paris', country: 'France', population: 'about two million', landmarks: ['Louvre'] }),
    toolCall('final_answer', { city: 'Paris', country: 'France', population: 2_102_650, landmarks: ['Louvre', 'Eiffel Tower'] }),
  ],
});
try {
  const agent = new Agent({ model: server.model(), outputSchema: City });
  const run = agent.run('Describe the capital of France.');
  run.subscribe((event) => {
    if (event.type === 'message_injected') console.log(`${event.kind}: ${JSON.stringify(event.message.content)}`);
    if (event.type === 'tool_finished' && event.result.isError) console.log(`refused: ${toolResultText(event.result.content)}`);
  });
  const result = await run;
  console.log(`${result.status}: ${result.reason} after ${result.totals.steps} steps`);
  // result.output is typed from the schema: { city: string; country: string; population: number; landmarks: string[] }
  const output = result.output;
  if (output)
    console.log(
      `${output.city}, ${output.country}: ${output.population.toLocaleString('en')} people; see ${output.landmarks.join(' and ')}`,
    );
} finally {
  await server.close();
}
