// Memory through a real Agent and the scripted model server.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { memoryLayer } from '../../src/memory/layer.js';
import { openMemory, type SqliteMemory } from '../../src/memory/sqlite-memory.js';
import { createMemoryTools } from '../../src/memory/tools.js';
import type { ScriptRequest } from '../../src/testing/index.js';
import { setup } from '../loop/helpers.js';

const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

async function fileMemory(): Promise<{ path: string; memory: SqliteMemory }> {
  const dir = await mkdtemp(join(tmpdir(), 'rein-memory-agent-'));
  cleanup.push(() => rm(dir, { recursive: true, force: true }));
  const path = join(dir, 'memory.db');
  const memory = await openMemory({ path, project: 'demo' });
  cleanup.push(() => memory.close());
  return { path, memory };
}

describe('memory through a real agent', () => {
  it('a note remembered in one run is retrieved into the next run and found by recall', async () => {
    const { path, memory } = await fileMemory();
    const first = await setup(
      [
        { toolCalls: [{ name: 'remember', arguments: { text: 'The staging database is reset every Monday.', tags: ['staging'] } }] },
        { text: 'Noted.' },
      ],
      { tools: createMemoryTools(memory) },
    );
    expect((await first.agent.run('Remember that staging resets on Mondays.')).reason).toBe('final_answer');
    memory.close();

    // A later session: a new connection to the same file.
    const later = await openMemory({ path, project: 'demo' });
    cleanup.push(() => later.close());
    const input = 'Why is my staging database empty?';
    const hits = await later.retrieve(input, 3);
    const second = await setup(
      [{ toolCalls: [{ name: 'recall', arguments: { query: 'staging database' } }] }, { text: 'It is reset every Monday.' }],
      { system: ['You are helpful.', memoryLayer(hits)].join('\n\n'), tools: createMemoryTools(later) },
    );
    await second.agent.run(input);
    const [turn1, turn2] = second.server.received.map((r) => r.request!) as [ScriptRequest, ScriptRequest];
    expect(turn1.system).toMatch(/<memory>[\s\S]*- \[1\] The staging database is reset every Monday\. \(tags: staging; from: run /);
    expect(turn2.messages.filter((m) => m.role === 'tool').at(-1)!.content).toMatch(
      /^- \[1\] The staging database is reset every Monday\./,
    );
  });
});
