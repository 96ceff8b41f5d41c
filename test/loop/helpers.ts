/** Shared set-up of the loop tests: a scripted model server and an agent pointed at it. */
import { afterEach } from 'vitest';
import { Agent } from '../../src/loop/agent.js';
import type { AgentOptions } from '../../src/loop/options.js';
import { startScriptedServer, type Script, type ScriptedServer } from '../../src/testing/index.js';
import { defineTool } from '../../src/tools/define.js';
import type { RunEvent } from '../../src/events.js';
import type { RunHandle } from '../../src/loop/handle.js';

const servers: ScriptedServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** Starts a scripted server (closed after the test) and an agent using it, with fast retries. */
export async function setup(script: Script, options: Omit<AgentOptions, 'model'> = {}, serverOptions: { tokenDelayMs?: number } = {}) {
  const server = await startScriptedServer({ script, ...serverOptions });
  servers.push(server);
  const agent = new Agent({ retry: { baseDelayMs: 5, maxDelayMs: 2000, jitter: false }, ...options, model: server.model() });
  return { server, agent };
}

/** Collects every event of a run and its result. */
export async function collect(handle: RunHandle): Promise<{ events: RunEvent[]; result: Awaited<RunHandle> }> {
  const events: RunEvent[] = [];
  for await (const event of handle) events.push(event);
  return { events, result: await handle };
}

/** `add(a, b)` as a tool. */
export const addTool = defineTool({
  name: 'add',
  description: 'Add two numbers.',
  parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
  risk: 'read',
  execute: ({ a, b }) => String((a as number) + (b as number)),
});

/** A tool that waits until released (or aborted): for steering and abort tests. */
export function gateTool(name = 'wait') {
  let release!: () => void;
  let started!: () => void;
  const released = new Promise<void>((r) => (release = r));
  const startedP = new Promise<void>((r) => (started = r));
  const tool = defineTool({
    name,
    description: 'Waits until released.',
    parameters: { type: 'object', properties: {} },
    execute: async (_args, ctx) => {
      started();
      await new Promise<void>((resolve, reject) => {
        void released.then(resolve);
        ctx.signal.addEventListener('abort', () => reject(new Error('aborted while waiting')), { once: true });
      });
      return 'released';
    },
  });
  return { tool, release, started: startedP };
}

/** The role sequence of a chat request's messages, e.g. `user,assistant,tool`. */
export function roles(messages: Array<{ role: string }>): string {
  return messages.map((m) => m.role).join(',');
}
