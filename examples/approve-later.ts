// An approval that waits: when a call needs a person and there is no `onConfirm` hook to
// ask, a stored run pauses (status `paused`, reason `awaiting_approval`) and the process may
// exit. Later, any process continues it with `agent.approve(runId)` (the CLI's
// `rein approve <run>`), and the call runs with exactly the arguments that were approved.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, defineTool, jsonSchema, toolResultText, type RunStore } from 'rein';
import { openStore } from 'rein/store';
import { startScriptedServer, text, toolCall } from 'rein/testing';

const folder = mkdtempSync(join(tmpdir(), 'rein-approve-'));
const database = join(folder, 'rein.db');

const deploy = defineTool({
  name: 'deploy',
  description: 'Deploy a version to production.',
  parameters: jsonSchema<{ version: string }>({ type: 'object', properties: { version: { type: 'string' } }, required: ['version'] }),
  risk: 'execute',
  execute: ({ version }) => `version ${version} is live`,
});

const server = await startScriptedServer({
  script: (request) =>
    request.messages.at(-1)?.role === 'tool' ? text('Version 2.4.1 is deployed.') : toolCall('deploy', { version: '2.4.1' }),
});
try {
  const agentWith = (store: RunStore) =>
    new Agent({
      model: server.model(),
      tools: [deploy],
      store,
      approvalPolicy: (_call, tool) => (tool?.risk === 'execute' ? 'ask' : 'allow'),
    });

  // First process: the run pauses at the deploy and the program ends.
  const first = await openStore(database);
  const run = agentWith(first).run('Deploy 2.4.1.');
  run.subscribe((event) => {
    if (event.type === 'approval_requested') console.log(`waiting: ${event.name} ${JSON.stringify(event.arguments)}`);
  });
  const paused = await run;
  console.log(`first: ${paused.status} (${paused.reason})`);
  await first.close();

  // Later, another process: a person approved (rein approve <run>, or a button in your app).
  const second = await openStore(database);
  const waiting = await second.listRuns({ status: 'paused' });
  console.log(`paused runs: ${waiting.map((r) => (r.id === run.runId ? 'this one' : r.id)).join(', ')}`);
  const approved = agentWith(second).approve(run.runId, { approved: true, reason: 'release window open' });
  approved.subscribe((event) => {
    if (event.type === 'tool_finished') console.log(`ran: ${event.name} → ${toolResultText(event.result.content)}`);
  });
  const result = await approved;
  console.log(`second: ${result.status} (${result.reason}): ${result.text}`);
  // The decision is in the log, with the hash of the arguments it was made for.
  for (const event of await second.loadEvents(run.runId)) {
    if (event.type === 'approval_decided')
      console.log(`logged: approved=${event.approved} (${event.reason}), arguments hash ${event.argumentsHash ? 'kept' : 'missing'}`);
  }
  await second.close();
} finally {
  await server.close();
  rmSync(folder, { recursive: true, force: true });
}
