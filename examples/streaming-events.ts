// Every step of a run is an event (docs/events.md lists them all). Two ways to read them:
// `for await` reads the events the handle keeps for it, a little after they happen;
// `subscribe` is called as each one is emitted, before the loop acts on it, so it is
// where a program reacts in time (here: it steers the run once the first result is in).
import { Agent, defineTool, jsonSchema, toolResultText, type RunEvent } from 'rein';
import { fault, startScriptedServer, text, toolCall } from 'rein/testing';

const forecasts: Record<string, string> = { Oslo: 'snow, -3 °C', Rome: 'sun, 18 °C' };
const weather = defineTool({
  name: 'weather',
  description: "Today's weather in a city.",
  parameters: jsonSchema<{ city: string }>({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }),
  risk: 'read',
  effect: 'pure',
  execute: ({ city }) => forecasts[city] ?? `no forecast for ${city}`,
});

// The scripted model answers from what it is sent. Its first answer is an HTTP 503, which
// rein retries (a `retry_scheduled` event, then a second `model_request`).
const server = await startScriptedServer({
  chunkSize: 10,
  script: (request, { index }) => {
    if (index === 0) return fault({ type: 'status', status: 503, retryAfterMs: 20 });
    const last = request.messages.at(-1);
    if (last?.role === 'user') return toolCall('weather', { city: last.content.includes('Rome') ? 'Rome' : 'Oslo' });
    const results = request.messages.flatMap((m) => (m.role === 'tool' ? [m.content] : []));
    return text(`Oslo: ${results[0]}. Rome: ${results[1]}.`);
  },
});

/** One line per event: its seq (a delta, never stored, has the seq of the next stored event), its type, what matters of it. */
function describe(event: RunEvent): string {
  return `${String(event.seq).padStart(2)} ${detail(event)}`;
}

function detail(event: RunEvent): string {
  switch (event.type) {
    case 'run_started':
      return `${event.type} model=${event.model.provider}/${event.model.id} tools=${event.tools.join(',')}`;
    case 'state_changed':
      return `${event.type} ${event.from} → ${event.to}`;
    case 'model_request':
      return `${event.type} step=${event.step} attempt=${event.attempt}`;
    case 'retry_scheduled':
      return `${event.type} after ${event.error.code} (HTTP ${event.error.status})`;
    case 'text_delta':
      return `${event.type} ${JSON.stringify(event.delta)}`;
    case 'tool_call_delta':
      return `${event.type} ${event.name ? `${event.name} ` : ''}${JSON.stringify(event.delta)}`;
    case 'assistant_message':
      return `${event.type} stopReason=${event.message.stopReason}`;
    case 'tool_started':
      return `${event.type} ${event.name} ${JSON.stringify(event.arguments)}`;
    case 'tool_finished':
      return `${event.type} ${event.name} → ${toolResultText(event.result.content)}`;
    case 'message_injected':
      return `${event.type} ${event.kind}: ${JSON.stringify(event.message.content)}`;
    case 'run_finished':
      return `${event.type} ${event.status} (${event.reason})`;
    default:
      return event.type;
  }
}

try {
  const agent = new Agent({ model: server.model(), tools: [weather] });
  const run = agent.run('What is the weather in Oslo?');
  let steered = false;
  run.subscribe((event) => {
    if (event.type === 'tool_finished' && !steered) {
      steered = true;
      run.steer('And in Rome?'); // read before the next model call
    }
  });
  for await (const event of run) console.log(describe(event));
  const result = await run;
  console.log(`answer: ${result.text}`);
} finally {
  await server.close();
}
