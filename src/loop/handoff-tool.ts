/**
 * Handoffs (issue 23), as OpenAI Agents has them: a tool that transfers the conversation to
 * another agent. Unlike a sub-agent, nothing comes back: from the next turn on the same run
 * goes on with the other agent's instructions, tools, hooks and model — possibly another
 * provider's, since the history is made valid for any model (see model/handoff.ts) — and
 * the same history, log and limits. The switch is logged as a `handoff` event; a resume
 * replays it (the run goes on with the agent it was handed to), and the run's result names
 * the agent that finished it (`result.agent`).
 */
import { ReinError } from '../errors.js';
import type { RunEvent } from '../events.js';
import { defineTool } from '../tools/define.js';
import type { Tool } from '../tools/types.js';
import type { LoopDeps } from './deps.js';
import type { RunSeed } from '../context/engine.js';
import type { Message, ModelRef } from '../model/types.js';

/** What a run takes from the agent a handoff gives it to: everything that makes it that agent. */
export type HandoffPart = Pick<
  LoopDeps,
  | 'model'
  | 'stream'
  | 'modelOptions'
  | 'system'
  | 'toolSpecs'
  | 'dispatch'
  | 'check'
  | 'toolOf'
  | 'approvalPolicy'
  | 'finalAnswerTool'
  | 'costOf'
  | 'toolExecution'
  | 'stopOnToolError'
  | 'hooks'
  | 'agentName'
  | 'context'
  | 'extras'
>;

/** An agent a handoff can give a run to (an `Agent` is one). */
export interface HandoffTarget {
  readonly options: { readonly name?: string };
  readonly model: ModelRef;
  /** @internal The loop's view of the agent for a run it takes over. */
  handoffPart(emit: LoopDeps['emit'], seed: RunSeed, run: { runId: string; history: readonly Message[] }): HandoffPart;
  /** @internal The agents this one's handoff tools lead to, by name. */
  handoffTargets(): ReadonlyMap<string, HandoffTarget>;
}

/** How a handoff is offered to the model. */
export interface HandoffOptions {
  /** The tool's name; default `transfer_to_<agent name>`. */
  name?: string;
  /** When to hand over; default says to whom. */
  description?: string;
}

/** Marks a tool as a handoff, with its target (so a resume can find the agent by name). */
const TARGET = Symbol('handoff target');

/** Handoffs their tools asked for, by run and call, until the call's `tool_finished`. */
const requested = new Map<string, HandoffTarget>();
/** Handoffs logged (their `handoff` event emitted), by run, until the loop switches. */
const logged = new Map<string, { toolCallId: string; target: HandoffTarget }>();
const callKey = (runId: string, toolCallId: string): string => `${runId}\u0000${toolCallId}`;

/**
 * A tool that hands the run to `agent` (which must have a `name`). Its result tells the
 * model the conversation was transferred; the next turn is the other agent's.
 *
 * @example
 * const billing = new Agent({ name: 'billing', model: 'anthropic/claude-haiku-4-5', system: 'You handle invoices.', tools: [refund] });
 * const triage = new Agent({ name: 'triage', model: 'openai/gpt-4o-mini', tools: [handoff(billing)] });
 * const result = await triage.run('I was charged twice');
 * result.agent; // 'billing'
 */
export function handoff(agent: HandoffTarget, options: HandoffOptions = {}): Tool {
  const name = agent.options.name;
  if (name === undefined)
    throw new ReinError(
      'config',
      'fatal',
      'handoff(agent): the agent needs a name (new Agent({ name: "billing", … })): the log records whom the run was handed to, and a resume finds it by that name',
    );
  const tool = defineTool({
    name: options.name ?? `transfer_to_${name.replace(/[^a-zA-Z0-9_-]/g, '_')}`,
    description:
      options.description ??
      `Hand the conversation over to the ${name} agent, which takes it from here. Use it when the request is ${name}'s to handle.`,
    parameters: { type: 'object', properties: {}, additionalProperties: false },
    // Running it again (a resume) only asks for the same handoff again.
    effect: 'idempotent',
    execute: (_args, ctx) => {
      requested.set(callKey(ctx.runId, ctx.toolCallId), agent);
      return `Transferred the conversation to the ${name} agent.`;
    },
  });
  Object.defineProperty(tool, TARGET, { value: agent });
  return tool;
}

/** The target of a handoff tool, if it is one. */
export function handoffTargetOf(tool: Tool): HandoffTarget | undefined {
  return (tool as unknown as { [TARGET]?: HandoffTarget })[TARGET];
}

/**
 * The `handoff` event of a call whose `tool_finished` is being emitted, when its tool asked
 * for one and the call succeeded (once: the request is taken either way). Emitted right after that `tool_finished`, in the same append: a resume
 * sees both or neither. The loop switches agents after the batch ({@link takeHandoff}).
 */
export function handoffEventOf(
  runId: string,
  toolCallId: string,
  step: number,
  from: string | undefined,
  ok: boolean,
): Extract<RunEvent, { type: 'handoff' }> | undefined {
  // Asked for every tool call: nothing to look up (and no key to build) without a handoff.
  if (requested.size === 0) return undefined;
  const key = callKey(runId, toolCallId);
  const target = requested.get(key);
  if (target === undefined) return undefined;
  requested.delete(key);
  // A call that ended in an error (aborted, say) hands nothing over.
  if (!ok) return undefined;
  logged.set(runId, { toolCallId, target });
  const model = target.model;
  return {
    type: 'handoff',
    step,
    toolCallId,
    ...(from === undefined ? {} : { from }),
    to: target.options.name as string,
    model: { provider: model.provider, id: model.id, api: model.api },
  } as Extract<RunEvent, { type: 'handoff' }>;
}

/** The last handoff logged by the batch of `runId` (once: it is taken). */
export function takeHandoff(runId: string): { toolCallId: string; target: HandoffTarget } | undefined {
  if (logged.size === 0) return undefined;
  const next = logged.get(runId);
  if (next) logged.delete(runId);
  return next;
}

/**
 * The agent a resumed run was last handed to, found by name among the agents the first
 * agent's handoffs lead to (and theirs); undefined when the log has no handoff.
 */
export function handedTo(first: HandoffTarget, events: readonly RunEvent[]): HandoffTarget | undefined {
  let last: string | undefined;
  for (const event of events) if (event.type === 'handoff') last = event.to;
  if (last === undefined) return undefined;
  const seen = new Map<string, HandoffTarget>();
  const queue = [first];
  while (queue.length > 0) {
    const agent = queue.shift() as HandoffTarget;
    for (const [name, target] of agent.handoffTargets()) {
      if (seen.has(name)) continue;
      seen.set(name, target);
      queue.push(target);
    }
  }
  const found = seen.get(last);
  if (!found) {
    throw new ReinError(
      'conflict',
      'fatal',
      `the run was handed to agent "${last}", which none of this agent's handoffs lead to any more (known: ${[...seen.keys()].join(', ') || 'none'}): give it the same handoffs to continue`,
    );
  }
  return found;
}
