// The policy as an agent's approvalPolicy, end to end over the scripted model server.
import { afterEach, describe, expect, it } from 'vitest';
import { Agent } from '../../src/loop/agent.js';
import { startScriptedServer, type ScriptedServer } from '../../src/testing/index.js';
import { createPermissionPolicy } from '../../src/permissions/policy.js';
import { defineTool } from '../../src/tools/define.js';

const servers: ScriptedServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

function shell() {
  const ran: string[] = [];
  const tool = defineTool({
    name: 'bash',
    description: 'Runs a shell command.',
    parameters: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] },
    risk: 'execute',
    permissionSubject: (args) => (typeof args.command === 'string' ? args.command : undefined),
    execute: ({ command }) => {
      ran.push(String(command));
      return `ran ${String(command)}`;
    },
  });
  return { tool, ran };
}

describe('a permission policy driving an agent', () => {
  it('allowed calls run, denied ones never do and the model is told', async () => {
    const server = await startScriptedServer({
      script: [
        {
          toolCalls: [
            { name: 'bash', arguments: { command: 'git status' } },
            { name: 'bash', arguments: { command: 'git status && rm -rf build' } },
          ],
        },
        { text: 'Done.' },
      ],
    });
    servers.push(server);
    const { tool, ran } = shell();
    const policy = createPermissionPolicy({ allow: ['bash(git status*)'], deny: ['bash(rm *)'] });
    const verdicts: string[] = [];
    const agent = new Agent({
      model: server.model(),
      tools: [tool],
      approvalPolicy: (call, t) => {
        const verdict = policy.decide(call, t);
        verdicts.push(`${verdict.decision} ${verdict.rule}`);
        return verdict.decision;
      },
    });
    const result = await agent.run('check the tree');
    expect(result).toMatchObject({ status: 'done', text: 'Done.' });
    expect(ran).toEqual(['git status']);
    expect(verdicts).toEqual(['allow allow bash(git status*)', 'deny deny bash(rm *)']);
    const toolMessages = server.requests.at(-1)!.messages.filter((m) => m.role === 'tool');
    expect(toolMessages.map((m) => String(m.content))).toEqual([
      'ran git status',
      expect.stringMatching(/^permission denied for tool "bash"/),
    ]);
  });
});
