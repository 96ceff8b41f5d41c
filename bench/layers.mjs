// `npm run bench:layers`: where rein's CPU per model request goes, layer by layer, against
// the node:http floor, in steady state (many runs per process). A diagnostic for tuning,
// not the benchmark of record (`npm run bench`).
//
//   floor   the hand-written node:http loop
//   http    rein's httpPost + eventsource-parser + ChatDecoder, minimal loop
//   adapter streamOpenAIChat, minimal loop
//   retry   streamWithRetry(streamOpenAIChat), minimal loop
//   agent   the whole Agent (loop, events, dispatcher, validation, stop rules)
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createParser } from 'eventsource-parser';
import { Agent, defineTool } from '../dist/index.js';
import { streamOpenAIChat, streamWithRetry } from '../dist/advanced.js';
import { ChatDecoder } from '../dist/model/providers/openai-chat-decode.js';
import { buildChatBody, chatHeaders, chatUrl } from '../dist/model/providers/openai-chat-request.js';
import { httpPost } from '../dist/http/client.js';
import { EventStream } from '../dist/model/event-stream.js';
import { httpFloor } from './floors.mjs';
import { startServer } from './server.mjs';

const LAYERS = ['floor', 'http', 'adapter', 'retry', 'agent'];
const [url, layer, runsArg = '300'] = process.argv.slice(2);

if (!url) {
  // Orchestrator: one fresh process per layer and round, so JIT state never carries over.
  const { child, url: serverUrl } = await startServer();
  const script = fileURLToPath(import.meta.url);
  const rows = {};
  try {
    for (let round = 0; round < 3; round++) {
      for (const name of LAYERS) {
        const out = execFileSync(process.execPath, [script, serverUrl, name], { encoding: 'utf8' });
        (rows[name] ??= []).push(Number(out.trim()));
      }
    }
  } finally {
    child.kill('SIGTERM');
  }
  const median = (v) => [...v].sort((a, b) => a - b)[1];
  const floor = median(rows.floor);
  console.log('| layer | CPU µs / model request | × floor |\n|---|---|---|');
  for (const name of LAYERS) console.log(`| ${name} | ${median(rows[name]).toFixed(0)} | ${(median(rows[name]) / floor).toFixed(2)} |`);
} else {
  const model = { provider: 'scripted', id: 'bench-8', api: 'openai-chat', baseUrl: url };
  const parameters = { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] };
  const tools = [{ name: 'add', description: 'Add two numbers.', parameters }];
  const bare = async (context) => {
    const out = new EventStream();
    const decoder = new ChatDecoder(out, model, { provider: model.provider, model: model.id, url });
    const res = await httpPost(chatUrl(url), chatHeaders(model), buildChatBody(model, context, {}));
    decoder.start();
    const parser = createParser({ onEvent: (e) => decoder.sse(e.event, e.data) });
    await res.consume((text) => parser.feed(text));
    decoder.streamEnded();
    return out.listen(() => {});
  };
  const minimalLoop = async (call) => {
    const messages = [{ role: 'user', content: 'Add the numbers, 8 times.' }];
    for (let requests = 1; ; requests++) {
      const message = await call({ messages, tools });
      messages.push(message);
      const calls = message.content.filter((c) => c.type === 'tool_call');
      if (calls.length === 0) return requests;
      for (const c of calls) {
        messages.push({
          role: 'tool',
          toolCallId: c.id,
          toolName: c.name,
          content: [{ type: 'text', text: String(c.arguments.a + c.arguments.b) }],
          isError: false,
        });
      }
    }
  };
  const add = defineTool({ name: 'add', description: 'Add two numbers.', parameters, execute: ({ a, b }) => String(a + b) });
  const agent = new Agent({ model, tools: [add] });
  const runs = {
    floor: () => httpFloor(url, model.id, 'x').then((r) => r.requests),
    http: () => minimalLoop(bare),
    adapter: () => minimalLoop((context) => streamOpenAIChat(model, context).result()),
    retry: () => minimalLoop((context) => streamWithRetry(streamOpenAIChat, model, context).result()),
    agent: () => agent.run('x').then((r) => r.totals.steps),
  };
  const run = runs[layer];
  for (let i = 0; i < 10; i++) await run();
  let requests = 0;
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < Number(runsArg); i++) requests += await run();
  const cpu = process.cpuUsage(cpu0);
  console.log((cpu.user + cpu.system) / requests);
}
