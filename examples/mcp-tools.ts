// MCP: rein is an MCP host. Each server's tools join the agent's as `<server>__<tool>`,
// validated against the server's schema like any tool; `readOnlyHint` makes a tool a read.
// This starts the official memory server over stdio (`npx` runs the copy installed beside
// rein, or fetches it); in a project, servers usually come from `.mcp.json` (`startMcp()`).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'rein';
import { startMcp } from 'rein/mcp';
import { startScriptedServer, text, toolCall } from 'rein/testing';

const folder = mkdtempSync(join(tmpdir(), 'rein-mcp-'));
const mcp = await startMcp({
  servers: {
    memory: {
      command: 'npx',
      args: ['-y', '@modelcontextprotocol/server-memory'],
      env: { MEMORY_FILE_PATH: join(folder, 'memory.jsonl') },
    },
  },
});
const server = await startScriptedServer({
  script: [
    toolCall('memory__create_entities', { entities: [{ name: 'Ada', entityType: 'person', observations: ['prefers tea'] }] }),
    toolCall('memory__search_nodes', { query: 'tea' }),
    text('Ada prefers tea.'),
  ],
});
try {
  for (const status of mcp.status()) console.log(`server ${status.name}: ${status.state}, ${status.toolCount} tools`);
  for (const d of mcp.diagnostics) console.log(`config problem: ${d.key}: ${d.message}`);
  const risks = mcp.toolInfo('memory').filter((t) => ['memory__create_entities', 'memory__search_nodes'].includes(t.name));
  for (const tool of risks) console.log(`${tool.name}: risk ${tool.risk}`);

  const agent = new Agent({ model: server.model(), toolSources: [mcp] });
  const run = agent.run('Remember that Ada prefers tea, then check what you know about tea.');
  run.subscribe((event) => {
    if (event.type === 'tool_finished') {
      // The server's structuredContent is kept for programs in `details` (the model reads the text).
      const details = event.result.details as {
        tool: string;
        structuredContent?: { entities: Array<{ name: string; observations: string[] }> };
      };
      const entities = details.structuredContent?.entities ?? [];
      console.log(`${details.tool}: ${entities.map((e) => `${e.name} (${e.observations.join('; ')})`).join(', ')}`);
    }
  });
  const result = await run;
  console.log(`${result.reason}: ${result.text}`);
} finally {
  await server.close();
  await mcp.close(); // ends every server and the processes it started
  rmSync(folder, { recursive: true, force: true });
}
