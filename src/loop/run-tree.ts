/**
 * One tree of runs (issue 23): the runs of this process that are a parent or a child of
 * another, as the sub-agent tool needs to see them. A sub-agent call is a run of its own in
 * the same store; what ties it to its parent lives here while both run:
 *
 * - the parent's node: its depth, the limits it runs under, its live totals and start, so a
 *   child is capped by what is left of the parent's token, cost and time budgets;
 * - a side channel from the sub-agent tool to the parent's batch: the usage a child spent
 *   (written into the call's `tool_finished`, so it counts in the parent's totals and in
 *   the fold of its log), and the calls whose child paused for a person (the parent's
 *   batch then pauses too, without a `tool_finished` for that call).
 *
 * Nothing here is durable: the logs are. A resumed tree rebuilds its nodes as its runs start.
 */
import type { RunEvent, RunLimits, RunTotals } from '../events.js';
import type { Usage } from '../model/types.js';
import { addCallUsage, takeCallUsage } from '../tools/call-side-channel.js';
import { addUsage } from './totals.js';

/** The deepest a tree grows by default: the root is depth 0, its children 1, … */
export const DEFAULT_MAX_DEPTH = 3;

/** What a child run is told of its place in the tree (given by the sub-agent tool). */
export interface RunParent {
  /** The parent run. */
  runId: string;
  /** The parent's tool call this child answers. */
  toolCallId: string;
  /** This child's depth (the parent's + 1). */
  depth: number;
  /** The root of the tree. */
  rootRunId: string;
  /** Limits the parent's remaining budgets impose on this child (merged over the child's own, the tighter wins). */
  limits?: Partial<RunLimits>;
}

/** A live run of the tree, as a child started from it sees it. */
export interface TreeNode {
  runId: string;
  rootRunId: string;
  depth: number;
  /** Epoch ms when this process started (or resumed) the run. */
  started: number;
  limits: RunLimits;
  /** The run's totals as the loop keeps them (set once the loop starts). */
  totals: RunTotals | undefined;
  /** The text of the run's task, handed to its children as context. */
  task: string;
  /** Whether the run is logged to a store (only then can it pause for a child). */
  durable: boolean;
  /** Hands an event of a descendant to the run's listeners (never to its log). */
  deliver: (event: RunEvent) => void;
}

const nodes = new Map<string, TreeNode>();
const pausedCalls = new Set<string>();

const callKey = (runId: string, toolCallId: string): string => `${runId}\u0000${toolCallId}`;

/** Makes a run visible to the sub-agents it starts; returns what removes it. */
export function registerRun(node: TreeNode): () => void {
  nodes.set(node.runId, node);
  return () => {
    if (nodes.get(node.runId) === node) nodes.delete(node.runId);
  };
}

/** The live run of that id in this process, if any. */
export function nodeOf(runId: string): TreeNode | undefined {
  return nodes.get(runId);
}

/**
 * Records what a child spent for `toolCallId` of `runId`, for that call's `tool_finished`
 * (the side channel of tool calls: summed with anything else spent for the call).
 */
export function noteChildUsage(runId: string, toolCallId: string, usage: Usage): void {
  addCallUsage(runId, toolCallId, usage);
}

/** The usage spent for this call: by a child, or on the call's behalf (once: it is taken). */
export function takeChildUsage(runId: string, toolCallId: string): Usage | undefined {
  return takeCallUsage(runId, toolCallId);
}

/** Marks a call whose child paused for a person: the parent's batch pauses instead of finishing it. */
export function noteChildPaused(runId: string, toolCallId: string): void {
  pausedCalls.add(callKey(runId, toolCallId));
}

/** Whether this call's child paused (once: the mark is taken). */
export function takeChildPaused(runId: string, toolCallId: string): boolean {
  if (pausedCalls.size === 0) return false;
  return pausedCalls.delete(callKey(runId, toolCallId));
}

/**
 * What is left of a parent's budgets, as limits for a child: tokens and cost not yet
 * spent, time not yet gone. Absent where the parent has no such limit.
 */
export function remainingLimits(node: TreeNode): Partial<RunLimits> {
  const out: Partial<RunLimits> = {};
  const { limits, totals } = node;
  if (limits.maxTokens !== undefined) out.maxTokens = Math.max(1, limits.maxTokens - (totals?.usage.total ?? 0));
  if (limits.maxCostUsd !== undefined) out.maxCostUsd = Math.max(Number.MIN_VALUE, limits.maxCostUsd - (totals?.usage.cost?.total ?? 0));
  if (limits.timeoutMs !== undefined) out.timeoutMs = Math.max(1, limits.timeoutMs - (Date.now() - node.started));
  return out;
}

/** A child's limits: its own, each budget tightened to what its parent has left. */
export function cappedLimits(own: RunLimits, parent: Partial<RunLimits> | undefined): RunLimits {
  if (parent === undefined) return own;
  const out: RunLimits = { ...own };
  for (const key of ['maxTokens', 'maxCostUsd', 'timeoutMs'] as const) {
    const cap = parent[key];
    if (cap === undefined) continue;
    const mine = own[key];
    out[key] = mine === undefined ? cap : Math.min(mine, cap);
  }
  return out;
}

/** Adds a child's usage to a run's totals (tokens and cost), as a turn's usage is added. */
export function addChildUsage(totals: RunTotals, usage: Usage): void {
  addUsage(totals, { role: 'assistant', content: [], stopReason: 'stop', usage, provider: '', model: '' });
}
