/**
 * The types the loop's files share: what the loop is given ({@link LoopDeps}), how a run
 * begins, and the answers of the approval path. In a module of their own so that no file
 * of `loop/` imports another in a circle.
 */
import type { RunEvent, RunEventBody, RunLimits } from '../events.js';
import type { Cost, Message, ModelRef, StreamFunction, StreamOptions, ToolCall, ToolSpec, Usage, UserMessage } from '../model/types.js';
import type { CheckedCall, DispatchOutcome, Tool } from '../tools/types.js';
import type { RunContext } from '../context/engine.js';
import type { AgentHooks } from './options.js';
import type { RunControls } from './handle.js';
import type { RunLog } from './run-log.js';
import type { ResumeState } from './resume-state.js';
import type { RunParent, TreeNode } from './run-tree.js';

/**
 * The permission check of one gated call, run by the dispatcher after validation and
 * `beforeToolCall`, right before execution: it gets exactly the arguments that will run.
 */
export type Confirm = (
  args: Record<string, unknown>,
  tool: Tool,
) => { allow: boolean; reason?: string } | Promise<{ allow: boolean; reason?: string }>;

/** A policy's decision on a call, with the rule that made it. */
export interface Verdict {
  decision: 'allow' | 'ask' | 'deny';
  rule?: string;
  reason?: string;
}

/** What an approval policy answers: a decision, or a verdict naming the rule that made it. */
export type PolicyAnswer = Verdict['decision'] | Verdict;

/** Everything the loop needs, injected so tests and other front-ends can swap any part. */
export interface LoopDeps {
  runId: string;
  traceId: string;
  model: ModelRef;
  /** The model call, already wrapped in retry. */
  stream: StreamFunction;
  modelOptions: Omit<StreamOptions, 'signal'>;
  system?: string;
  /** The tools the model is offered, asked for every turn (tool sources may change them). */
  toolSpecs: () => ToolSpec[];
  /**
   * Runs one call. `confirm`, under an approval policy, is the permission check of a call
   * the policy did not simply allow: the dispatcher asks it after validation and
   * `beforeToolCall`, with the arguments that will run (absent: the call is allowed).
   */
  dispatch: (
    call: ToolCall,
    ctx: { signal: AbortSignal; runId: string; idempotencyKey: string; step: number; checkedArguments?: Record<string, unknown> },
    confirm?: Confirm,
  ) => DispatchOutcome | Promise<DispatchOutcome>;
  /** The arguments a call's tool would receive (repaired, validated), before anything is recorded or decided. */
  check: (call: ToolCall) => CheckedCall | Promise<CheckedCall>;
  /** What a response's usage cost in USD (`undefined` when the model's price is unknown). */
  costOf?: (usage: Usage) => Cost | undefined;
  /** Name of the final-answer tool when the run has an output schema. */
  finalAnswerTool?: string;
  limits: RunLimits;
  toolExecution: 'parallel' | 'sequential';
  stopOnToolError: boolean;
  hooks: AgentHooks;
  controls: RunControls;
  /** Receives every event body; returns the `seq` it was stamped with. */
  emit: (body: RunEventBody) => number;
  /**
   * Whether streamed deltas (`text_delta`, `thinking_delta`, `tool_call_delta`) would reach
   * anyone now; they are skipped when not (they are never stored). Absent: always emitted.
   */
  wantsDeltas?: () => boolean;
  /** The durable log, when the run is stored: the loop waits on it at the write points. */
  log?: RunLog;
  /** Assembles each request from layers and compacts the history near the window; absent: the bare history is sent. */
  context?: RunContext;
  /** The tool behind a name (for its declared effect when a resume must decide). */
  toolOf: (name: string) => Tool | undefined;
  /** Which calls need a person's approval (see `AgentOptions.approvalPolicy`). */
  approvalPolicy?: (call: ToolCall, tool: Tool | undefined) => PolicyAnswer | Promise<PolicyAnswer>;
  /** The span of this run attempt (and the caller's), recorded in `run_started` / `run_resumed`. */
  traceSpan?: { spanId: string; parentSpanId?: string };
  /** The run as the sub-agents it starts see it (see run-tree.ts). */
  tree?: TreeNode;
  /** Set for a sub-agent's run: its parent, recorded in `run_started`. */
  parent?: RunParent;
  /** The agent's name, recorded in `run_started`. */
  agentName?: string;
  /**
   * The run's share of the agent's skills, paging and tool selection (agent-extras.ts):
   * every event reaches it, and it ends with the run or when a handoff gives the run to
   * another agent, whose own share takes over.
   */
  extras?: { onEvent(event: RunEvent): void; end(): void };
}

/** How a run begins: fresh, or continuing a stored run from its log. */
export type LoopStart = { kind: 'new'; input: UserMessage; history: Message[] } | { kind: 'resume'; state: ResumeState; epoch: number };
