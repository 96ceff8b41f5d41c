import { describe, expect, it } from 'vitest';
import { updatePlanTool } from '../../src/context/plan-tool.js';
import { describeStep, renderTask, TaskTracker, taskFromEvents } from '../../src/context/task.js';
import type { RunEvent } from '../../src/events.js';
import type { AssistantMessage, Message, ToolResultMessage } from '../../src/model/types.js';
import { emptyUsage } from '../../src/model/types.js';

const call = (id: string, name: string, args: Record<string, unknown>) => ({
  type: 'tool_call' as const,
  id,
  name,
  arguments: args,
  rawArguments: JSON.stringify(args),
});
const assistant = (content: AssistantMessage['content']): AssistantMessage => ({
  role: 'assistant',
  content,
  stopReason: 'tool_use',
  usage: emptyUsage(),
  provider: 'p',
  model: 'm',
});
const result = (id: string, name: string, text: string, isError = false): ToolResultMessage => ({
  role: 'tool',
  toolCallId: id,
  toolName: name,
  content: [{ type: 'text', text }],
  isError,
});

describe('one sentence per completed step', () => {
  it('names each call with its key arguments and what came back, and the reason the model gave', () => {
    const a = assistant([
      { type: 'text', text: 'I need the config first. Then I will patch it.' },
      call('1', 'read_file', { path: 'src/a.ts' }),
      call('2', 'run', { cmd: 'npm test' }),
    ]);
    const text = describeStep(a, [result('1', 'read_file', 'line1\nline2\nline3'), result('2', 'run', 'exit 1: 2 tests failed', true)]);
    expect(text).toBe(
      'read_file(path=src/a.ts) → 3 lines: "line1"; run(cmd=npm test) → error: exit 1: 2 tests failed (why: I need the config first.)',
    );
  });

  it('stays short whatever the arguments and results', () => {
    const a = assistant([call('1', 'write_file', { path: 'x.txt', content: 'y'.repeat(10_000) })]);
    const text = describeStep(a, [result('1', 'write_file', 'z'.repeat(10_000))]);
    expect(text.length).toBeLessThan(250);
    expect(text).toMatch(/^write_file\(path=x\.txt, content=y+…\) → "z+…"$/);
  });
});

describe('the task record', () => {
  const history: Message[] = [
    { role: 'user', content: 'Fix the build' },
    assistant([call('p', 'update_plan', { steps: ['Run tests', 'Fix a.ts'] })]),
    result('p', 'update_plan', 'Plan updated (2 steps).'),
    assistant([call('t', 'run', { cmd: 'npm test' })]),
    result('t', 'run', 'ok'),
    assistant([call('x', 'update_plan', { steps: ['Ignored: this call failed'] })]),
    result('x', 'update_plan', 'invalid', true),
    assistant([call('o', 'run', { cmd: 'npm run build' })]),
  ];

  it('is kept incrementally from the history; an open batch waits for its results', () => {
    const tracker = new TaskTracker('Fix the build');
    tracker.sync(history);
    expect(tracker.record.completed).toHaveLength(3);
    expect(tracker.record.plan).toEqual(['Run tests', 'Fix a.ts']);
    expect(tracker.scanned).toBe(7);
    tracker.sync([...history, result('o', 'run', 'built')]);
    expect(tracker.record.completed.at(-1)).toBe('run(cmd=npm run build) → "built"');
    expect(tracker.scanned).toBe(9);
  });

  it("is the same when folded from a stored run's events", () => {
    const events = [
      { type: 'run_started', input: { role: 'user', content: 'Fix the build' }, history: [] },
      ...history
        .slice(1)
        .map((m, i) =>
          m.role === 'assistant'
            ? { type: 'assistant_message', step: i, message: m }
            : { type: 'tool_finished', step: i, toolCallId: (m as ToolResultMessage).toolCallId, name: 'run', result: m, durationMs: 1 },
        ),
      { type: 'tool_finished', step: 9, toolCallId: 'o', name: 'run', result: result('o', 'run', 'built'), durationMs: 1 },
    ] as unknown as RunEvent[];
    const live = new TaskTracker('Fix the build');
    live.sync([...history, result('o', 'run', 'built')]);
    expect(taskFromEvents(events)).toEqual(live.record);
  });

  it('renders the goal, the plan and the latest steps', () => {
    const completed = Array.from({ length: 14 }, (_, i) => `step ${i + 1}`);
    const text = renderTask({ goal: 'Fix the build', completed, plan: ['Run tests', 'Fix a.ts'] });
    expect(text).toContain('Goal: Fix the build');
    expect(text).toContain('Plan:\n1. Run tests\n2. Fix a.ts');
    expect(text).toContain('Completed steps (14; the last 10 listed):\n5. step 5');
    expect(text).not.toContain('4. step 4');
    expect(text.endsWith('14. step 14')).toBe(true);
  });
});

describe('update_plan', () => {
  it('is a pure read tool that acknowledges the plan', async () => {
    expect(updatePlanTool).toMatchObject({ name: 'update_plan', risk: 'read', effect: 'pure' });
    const ctx = {
      signal: new AbortController().signal,
      runId: 'r',
      toolCallId: 'c',
      idempotencyKey: 'k',
      log: () => {},
      progress: () => {},
    };
    expect(await updatePlanTool.execute({ steps: ['a', 'b'] }, ctx)).toMatch(/Plan updated \(2 steps\)/);
  });
});
