// An abort wins over every wait on code rein does not control: a person who never answers
// onConfirm, a hook that never settles, a context transform that hangs. The run ends
// `aborted` at once, and its log is valid (it folds to the result).
import { describe, expect, it } from 'vitest';
import type { RunEvent } from '../../src/events.js';
import type { AgentOptions } from '../../src/loop/options.js';
import { MemoryRunStore } from '../../src/store/memory.js';
import { addTool, setup } from './helpers.js';
import { expectLogFoldsTo } from './log-folds.js';

const never = <T>(): Promise<T> => new Promise<T>(() => undefined);
const addCall = { toolCalls: [{ name: 'add', arguments: { a: 1, b: 2 } }] };

/** Starts a run with `hooks`, aborts it once `ready` resolves, and checks it ended aborted with a whole log. */
async function abortWhile(hooks: AgentOptions['hooks'], ready: Promise<void>, extra: Omit<AgentOptions, 'model'> = {}) {
  const store = new MemoryRunStore();
  const { agent } = await setup([addCall, addCall, { text: 'never' }], { tools: [addTool], store, hooks, ...extra });
  const handle = agent.run('go');
  await ready;
  const abortedAt = Date.now();
  handle.abort();
  const result = await handle;
  // Generous for a loaded machine: without the fix the run never ends (the test times out).
  expect(Date.now() - abortedAt).toBeLessThan(5_000);
  expect(result).toMatchObject({ status: 'aborted', reason: 'aborted' });
  const events = await store.loadEvents(result.runId);
  expectLogFoldsTo(events, result);
  return events;
}

function signal() {
  let fire!: () => void;
  const fired = new Promise<void>((r) => (fire = r));
  return { fire, fired };
}

describe('abort wins over a pending wait', () => {
  it('onConfirm that never answers: aborted, the question left unanswered in the log', async () => {
    const asked = signal();
    const events = await abortWhile(
      {
        onConfirm: () => {
          asked.fire();
          return never();
        },
      },
      asked.fired,
      { approvalPolicy: () => 'ask' },
    );
    const types = events.map((e: RunEvent) => e.type);
    expect(types).toContain('approval_requested');
    expect(types).not.toContain('approval_decided');
    expect(events.find((e) => e.type === 'tool_finished')).toMatchObject({ errorCode: 'aborted' });
  });

  it('beforeToolCall that never settles', async () => {
    const called = signal();
    await abortWhile(
      {
        beforeToolCall: () => {
          called.fire();
          return never();
        },
      },
      called.fired,
    );
  });

  it('afterToolCall that never settles', async () => {
    const called = signal();
    await abortWhile(
      {
        afterToolCall: () => {
          called.fire();
          return never();
        },
      },
      called.fired,
    );
  });

  it('shouldStopAfterTurn that never settles', async () => {
    const called = signal();
    await abortWhile(
      {
        shouldStopAfterTurn: () => {
          called.fire();
          return never();
        },
      },
      called.fired,
    );
  });

  it('transformContext that never settles', async () => {
    const called = signal();
    await abortWhile(
      {
        transformContext: () => {
          called.fire();
          return never();
        },
      },
      called.fired,
    );
  });
});
