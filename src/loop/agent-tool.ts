/**
 * An agent as a tool (issue 23): calling it starts a sub-agent — a run of its own, in the
 * same store, with its own history (its task, and the parent's task as context, nothing
 * else), tools, model and limits — and answers with the child's result. The child's run
 * names its parent run and call; its events reach the parent's listeners with their run id
 * and depth; what it spends counts in the parent's totals; the parent's remaining budgets
 * cap it; the parent's abort aborts it.
 *
 * Durable: the child's run id is made from the call's idempotency key, stable across
 * resumes, so a resumed parent that runs the call again finds the child's log: a child
 * that ended answers from its log (nothing runs again), one cut off by a crash or paused
 * for a person is resumed from its own log. A child that pauses for a person pauses the
 * parent's batch (the call gets no `tool_finished` until the child is over).
 */
import type { RunEvent, RunResult } from '../events.js';
import type { UserMessage } from '../model/types.js';
import { messagesFromEvents } from './fold.js';
import type { RunStore } from '../store/types.js';
import { defineTool } from '../tools/define.js';
import type { Tool, ToolContext, ToolOutput } from '../tools/types.js';
import type { RunHandle } from './handle.js';
import { DEFAULT_MAX_DEPTH, nodeOf, noteChildPaused, noteChildUsage, remainingLimits, type RunParent } from './run-tree.js';

/** What {@link agentTool} needs of an agent: it starts and resumes runs (an `Agent` is one). */
export interface SubAgent {
  readonly options: { readonly name?: string; readonly store?: RunStore };
  run(input: string | UserMessage, options: { runId?: string; signal?: AbortSignal; parent?: RunParent }): RunHandle;
  resume(runId: string, options: { signal?: AbortSignal; parent?: RunParent }): RunHandle;
}

/** How a sub-agent is offered to its parent's model. */
export interface AgentToolOptions {
  /** The tool's name (letters, digits, `_`, `-`). */
  name: string;
  /** What the sub-agent does and when to hand it work: this is what the parent's model reads. */
  description: string;
  /**
   * The tool's parameters (JSON Schema, zod or TypeBox). Default `{ task: string }`, whose
   * `task` is the child's input; with another schema the child's input is the arguments as JSON.
   */
  input?: object;
  /**
   * The tool result made of the child's finished run. Default: its structured output as
   * JSON when its agent has an `outputSchema` (checked by the child), else its text.
   */
  output?: (result: RunResult) => ToolOutput;
  /** The deepest the tree may be for this child to start (the root is depth 0). Default 3. */
  maxDepth?: number;
}

const TASK_INPUT = {
  type: 'object',
  properties: {
    task: {
      type: 'string',
      description: 'The work to hand over, with everything the sub-agent needs to know: it sees nothing else of this conversation.',
    },
  },
  required: ['task'],
  additionalProperties: false,
} as const;

/**
 * A tool that runs `agent` as a sub-agent. Give the child agent the parent's store (the
 * tree is then durable and resumable as one); without a store the child runs in memory.
 *
 * @example
 * const reviewer = new Agent({ name: 'reviewer', model: 'anthropic/claude-sonnet-4-5', system: 'Review diffs.', store });
 * const lead = new Agent({ model: 'openai/gpt-4o', store, tools: [agentTool(reviewer, { name: 'reviewer', description: 'Reviews a diff and lists problems.' })] });
 */
export function agentTool(agent: SubAgent, options: AgentToolOptions): Tool {
  const maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
  return defineTool({
    name: options.name,
    description: options.description,
    parameters: options.input ?? TASK_INPUT,
    // Running the call again (a resume) finds the child by its id and continues it: nothing runs twice.
    effect: 'idempotent',
    // Handing work over changes nothing by itself: what the child does is decided by its own permission policy.
    risk: 'read',
    // The parent's remaining time caps the child's run instead of a per-call timeout.
    timeoutMs: Infinity,
    execute: (args, ctx) => callSubAgent(agent, options, maxDepth, args, ctx),
  });
}

async function callSubAgent(
  agent: SubAgent,
  options: AgentToolOptions,
  maxDepth: number,
  args: Record<string, unknown>,
  ctx: ToolContext,
): Promise<ToolOutput> {
  const parent = nodeOf(ctx.runId);
  const depth = (parent?.depth ?? 0) + 1;
  if (depth > maxDepth) {
    return {
      content: `sub-agent "${options.name}" was not started (max_depth): it would run at depth ${depth} of the tree of runs, and at most ${maxDepth} levels are allowed. Do this part yourself, or hand it to an agent nearer the root.`,
      isError: true,
      details: { reason: 'max_depth', depth, maxDepth },
    };
  }
  const link: RunParent = { runId: ctx.runId, toolCallId: ctx.toolCallId, depth, rootRunId: parent?.rootRunId ?? ctx.runId };
  if (parent) link.limits = remainingLimits(parent);
  const task = options.input === undefined && typeof args.task === 'string' ? args.task : JSON.stringify(args);
  const input = parent?.task ? `${task}\n\n(This is part of a larger task: ${parent.task})` : task;

  const started = await startOrContinue(agent, childRunId(ctx.idempotencyKey), input, link, ctx.signal);
  let result: RunResult;
  if ('finished' in started) result = started.finished;
  else {
    // The child's events reach the parent's listeners, marked with its depth; a grandchild's keep theirs.
    const forward = parent
      ? started.handle.subscribe((event) => parent.deliver(event.depth === undefined ? { ...event, depth } : event))
      : undefined;
    try {
      result = await started.handle;
    } finally {
      forward?.();
    }
  }
  if (result.status === 'paused' && parent && !parent.durable) {
    // The child waits in its store, but this run has none to wait in: it cannot pause with it.
    return {
      content: `sub-agent "${options.name}" (run ${result.runId}) waits for a person's approval, and this run has no store to pause in: give the parent agent the child's store, or decide the child's call with agent.approve("${result.runId}")`,
      isError: true,
      details: summary(result),
    };
  }
  if (result.status === 'paused') {
    noteChildPaused(ctx.runId, ctx.toolCallId);
    return { content: `sub-agent "${options.name}" (run ${result.runId}) waits for a person's approval`, details: summary(result) };
  }
  noteChildUsage(ctx.runId, ctx.toolCallId, result.totals.usage);
  if (result.status === 'done') {
    if (options.output) return options.output(result);
    const text = result.output !== undefined ? JSON.stringify(result.output) : result.text || '(the sub-agent finished without an answer)';
    return { content: text, details: summary(result) };
  }
  const why = result.error ? `: ${result.error.message}` : result.detail ? `: ${result.detail}` : '';
  const last = result.text ? ` Its last answer: ${result.text}` : '';
  return {
    content: `sub-agent "${options.name}" (run ${result.runId}) ${result.status} (${result.reason})${why}.${last}`,
    isError: true,
    details: summary(result),
  };
}

/** The child's run id: its parent call's idempotency key (`<run>:<seq>:<index>`), stable across resumes. */
export function childRunId(idempotencyKey: string): string {
  return idempotencyKey.replaceAll(':', '.');
}

type Started = { handle: RunHandle } | { finished: RunResult };

/**
 * The child's run: new, continued from its log, or — when its log shows it ended — its
 * result, nothing run. A child whose record was made but whose first event never reached
 * the store (a crash in between) never began: the next attempt gets the next id.
 */
async function startOrContinue(agent: SubAgent, base: string, input: string, link: RunParent, signal: AbortSignal): Promise<Started> {
  const store = agent.options.store;
  if (!store) return { handle: agent.run(input, { signal, parent: link }) };
  for (let attempt = 1; ; attempt++) {
    const runId = attempt === 1 ? base : `${base}~${attempt}`;
    const record = await store.getRun(runId);
    if (!record) return { handle: agent.run(input, { runId, signal, parent: link }) };
    if (record.eventCount === 0) continue;
    const events = await store.loadEvents(runId);
    const last = events[events.length - 1];
    if (last?.type === 'run_finished' && last.status !== 'paused') return { finished: resultOf(last, events) };
    return { handle: agent.resume(runId, { signal, parent: link }) };
  }
}

function resultOf(last: Extract<RunEvent, { type: 'run_finished' }>, events: RunEvent[]): RunResult {
  return { ...last.result, messages: messagesFromEvents(events) };
}

function summary(result: RunResult): Record<string, unknown> {
  return {
    runId: result.runId,
    ...(result.agent === undefined ? {} : { agent: result.agent }),
    status: result.status,
    reason: result.reason,
    ...(result.output === undefined ? {} : { output: result.output }),
  };
}
