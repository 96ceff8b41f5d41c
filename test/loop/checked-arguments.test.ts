// The log, the policy and a person see the arguments the tool receives (repaired,
// validated, defaults filled), and a policy's answer that is not a decision fails closed.
import { mkdtempSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunEvent } from '../../src/events.js';
import { createPermissionPolicy } from '../../src/permissions/policy.js';
import { MemoryRunStore } from '../../src/store/memory.js';
import { defineTool } from '../../src/tools/define.js';
import { firstDivergence } from '../../src/loop/replay.js';
import { collect, setup } from './helpers.js';

const FENCED = '```json\n{"command": "echo pwned > hacked.txt; echo ok",}\n```';

/** A shell-like tool that records what it was given instead of running it. */
function shellTool() {
  const ran: Array<Record<string, unknown>> = [];
  const tool = defineTool({
    name: 'bash',
    description: 'Runs a command.',
    parameters: {
      type: 'object',
      properties: { command: { type: 'string' }, timeout: { type: 'integer', default: 30 } },
      required: ['command'],
    },
    risk: 'execute',
    permissionSubject: (args) => (typeof args.command === 'string' ? args.command : undefined),
    execute: (args) => {
      ran.push(args);
      return 'ran';
    },
  });
  return { tool, ran };
}

const ofType = <T extends RunEvent['type']>(events: RunEvent[], type: T) =>
  events.filter((e): e is Extract<RunEvent, { type: T }> => e.type === type);

describe('the recorded arguments are the ones that run', () => {
  it('a repaired call is recorded, traced and replayed with its repaired arguments, the model text beside them', async () => {
    const { tool, ran } = shellTool();
    const { agent } = await setup([{ toolCalls: [{ name: 'bash', arguments: FENCED }] }, { text: 'done' }], { tools: [tool] });
    const { events } = await collect(agent.run('go'));
    const [started] = ofType(events, 'tool_started');
    expect(started?.arguments).toEqual({ command: 'echo pwned > hacked.txt; echo ok', timeout: 30 });
    expect(started?.rawArguments).toBe(FENCED);
    expect(ran).toEqual([{ command: 'echo pwned > hacked.txt; echo ok', timeout: 30 }]);
    // A divergence check compares what ran: a replay sending plain JSON is the same run.
    const { tool: again } = shellTool();
    const plain = await setup(
      [{ toolCalls: [{ name: 'bash', arguments: { command: 'echo pwned > hacked.txt; echo ok' } }] }, { text: 'done' }],
      { tools: [again] },
    );
    const replayed = await collect(plain.agent.run('go'));
    expect(firstDivergence(events, replayed.events)).toBeUndefined();
  });

  it('plain arguments that need nothing carry no rawArguments', async () => {
    const { tool } = shellTool();
    const { agent } = await setup([{ toolCalls: [{ name: 'bash', arguments: { command: 'ls', timeout: 5 } }] }, { text: 'done' }], {
      tools: [tool],
    });
    const { events } = await collect(agent.run('go'));
    expect(ofType(events, 'tool_started')[0]).not.toHaveProperty('rawArguments');
  });

  it('a deny rule is matched against the repaired call: yolo with deny bash(echo*) refuses the fenced call', async () => {
    const { tool, ran } = shellTool();
    const policy = createPermissionPolicy({ mode: 'yolo', deny: ['bash(echo*)'] });
    const { agent } = await setup([{ toolCalls: [{ name: 'bash', arguments: FENCED }] }, { text: 'done' }], {
      tools: [tool],
      store: new MemoryRunStore(),
      approvalPolicy: (call, t) => policy.decide(call, t),
    });
    const { events, result } = await collect(agent.run('go'));
    expect(result.status).toBe('done');
    expect(ran).toEqual([]);
    expect(ofType(events, 'permission_decided')).toEqual([expect.objectContaining({ decision: 'deny', rule: 'deny bash(echo*)' })]);
    expect(ofType(events, 'tool_finished')[0]?.errorCode).toBe('tool_denied');
  });

  it('the policy and the person see the validated arguments; the approval hash is theirs', async () => {
    const { tool, ran } = shellTool();
    const seen: unknown[] = [];
    const { agent } = await setup([{ toolCalls: [{ name: 'bash', arguments: FENCED }] }, { text: 'done' }], {
      tools: [tool],
      approvalPolicy: (call) => (seen.push(call.arguments), 'ask'),
      hooks: { onConfirm: (_call, args) => (seen.push(args), true) },
    });
    const { events } = await collect(agent.run('go'));
    const expected = { command: 'echo pwned > hacked.txt; echo ok', timeout: 30 };
    expect(seen).toEqual([expected, expected]);
    expect(ofType(events, 'approval_requested')[0]?.arguments).toEqual(expected);
    expect(ran).toEqual([expected]);
  });

  it('a call that fails validation never reaches the policy or a person', async () => {
    const { tool, ran } = shellTool();
    let asked = 0;
    const { agent } = await setup([{ toolCalls: [{ name: 'bash', arguments: { cmd: 'ls' } }] }, { text: 'done' }], {
      tools: [tool],
      approvalPolicy: () => (asked++, 'allow'),
      hooks: { onConfirm: () => (asked++, true) },
    });
    const { events } = await collect(agent.run('go'));
    expect(asked).toBe(0);
    expect(ran).toEqual([]);
    expect(ofType(events, 'permission_decided')).toEqual([]);
    expect(ofType(events, 'tool_finished')[0]?.errorCode).toBe('invalid_arguments');
  });
});

describe('a policy answer that is not a decision fails closed', () => {
  const cases: Array<[string, () => unknown, RegExp]> = [
    ["'maybe'", () => 'maybe', /returned "maybe", which is not a decision/],
    ["{ decision: 'perhaps' }", () => ({ decision: 'perhaps' }), /returned \{"decision":"perhaps"\}/],
    ['0', () => 0, /returned 0/],
    ['undefined', () => undefined, /returned undefined/],
    ["async 'deny'", async () => 'deny', /the permission policy does not allow it/],
    ['async rejection', () => Promise.reject(new Error('policy store down')), /approval policy failed \(policy store down\)/],
    [
      'a throw',
      () => {
        throw new Error('bug in policy');
      },
      /approval policy failed \(bug in policy\)/,
    ],
    ["async 'maybe'", async () => 'maybe', /returned "maybe"/],
  ];
  it.each(cases)('%s denies, with a reason naming what came back, and every call gets a result', async (_label, policy, reason) => {
    const { tool, ran } = shellTool();
    const { agent } = await setup(
      [
        {
          toolCalls: [
            { name: 'bash', arguments: { command: 'ls' } },
            { name: 'bash', arguments: { command: 'pwd' } },
          ],
        },
        { text: 'done' },
      ],
      {
        tools: [tool],
        approvalPolicy: policy as never,
      },
    );
    const { events, result } = await collect(agent.run('go'));
    expect(result.status).toBe('done');
    expect(ran).toEqual([]);
    const finished = ofType(events, 'tool_finished');
    expect(finished).toHaveLength(2);
    for (const f of finished) {
      expect(f.errorCode).toBe('tool_denied');
      const text = f.result.content[0]?.type === 'text' ? f.result.content[0].text : '';
      expect(text).toMatch(reason);
    }
    expect(ofType(events, 'permission_decided').map((e) => e.decision)).toEqual(['deny', 'deny']);
  });

  it("an async 'allow' runs and an async 'ask' goes to the person", async () => {
    const { tool, ran } = shellTool();
    let asked = 0;
    const { agent } = await setup(
      [
        {
          toolCalls: [
            { name: 'bash', arguments: { command: 'ls' } },
            { name: 'bash', arguments: { command: 'pwd' } },
          ],
        },
        { text: 'done' },
      ],
      {
        tools: [tool],
        approvalPolicy: async (call) => (call.arguments.command === 'ls' ? 'allow' : 'ask') as 'allow' | 'ask',
        hooks: { onConfirm: () => (asked++, false) },
      },
    );
    await collect(agent.run('go'));
    expect(ran.map((a) => a.command)).toEqual(['ls']);
    expect(asked).toBe(1);
  });
});

describe('the repaired call through the real shell tool', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });
  it('a yolo deny on the fenced call leaves nothing written', async () => {
    dir = mkdtempSync(join(tmpdir(), 'rein-checked-'));
    const { createWorkspaceTools } = await import('../../src/workspace/index.js');
    const tools = createWorkspaceTools({ root: dir, tools: ['bash'] });
    const policy = createPermissionPolicy({ mode: 'yolo', deny: ['bash(echo*)'] });
    const { agent } = await setup([{ toolCalls: [{ name: 'bash', arguments: FENCED }] }, { text: 'done' }], {
      tools,
      approvalPolicy: (call, t) => policy.decide(call, t),
    });
    await collect(agent.run('go'));
    expect(existsSync(join(dir, 'hacked.txt'))).toBe(false);
  });
});
