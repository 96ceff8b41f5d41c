// One fresh process: the first run of an agent against the scripted model, then a second
// run (a new agent and tool, as the first), timing each to its first model request and to
// its end. Prints one JSON line. Usage: node bench/first-run-client.mjs <baseUrl> <turns>
const [url, turnsArg = '8'] = process.argv.slice(2);
const turns = Number(turnsArg);
// performance.now() counts from the process's start: the first figure includes Node's own start-up.
const started = performance.now();
const { Agent, defineTool } = await import('rein');
const imported = performance.now();

function makeAgent() {
  return new Agent({
    model: { provider: 'scripted', id: `bench-${turns}`, api: 'openai-chat', baseUrl: url },
    tools: [
      defineTool({
        name: 'add',
        description: 'Add two numbers.',
        parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
        execute: ({ a, b }) => String(a + b),
      }),
    ],
    limits: { maxSteps: turns + 5 },
  });
}

async function timedRun() {
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const handle = makeAgent().run(`Add the numbers, ${turns} times.`);
  let firstRequest;
  for await (const event of handle) if (event.type === 'model_request' && firstRequest === undefined) firstRequest = performance.now() - t0;
  const result = await handle;
  if (result.reason !== 'final_answer') throw new Error(`run ended with ${result.reason}`);
  const cpu = process.cpuUsage(cpu0);
  // CPU time too: on a busy machine the wall time of one run says more about the machine.
  return { firstRequestMs: firstRequest, runMs: performance.now() - t0, cpuMs: (cpu.user + cpu.system) / 1000 };
}

const first = await timedRun();
const second = await timedRun();
console.log(JSON.stringify({ startMs: started, importMs: imported - started, first, second }));
