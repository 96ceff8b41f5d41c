/**
 * The answer at the limit (`limits.finalAnswerOnStop`): a run stopped by `max_steps`, the
 * budget, the timeout or `no_progress` makes one last model request with no tools, asking
 * for the best answer from the work done. What this file holds is the part that needs no
 * run state: which stops qualify, the instruction, and what that request may cost at most.
 */
import type { RunLimits, RunTotals, StopReasonCode } from '../events.js';
import type { Message, Usage } from '../model/types.js';

/** The stops a final answer is asked after: the limits. Never `aborted`, a failure or a pause. */
export const ANSWER_AT_LIMIT: ReadonlySet<StopReasonCode> = new Set<StopReasonCode>(['max_steps', 'budget', 'timeout', 'no_progress']);

/** The output allowance of that request when the agent sets none: an answer, not more work. */
export const FINAL_ANSWER_MAX_TOKENS = 2048;

/** How long the request may take after a timeout stopped the run (the run's own allowance is spent). */
export const FINAL_ANSWER_TIMEOUT_MS = 120_000;

const WHY: Partial<Record<StopReasonCode, string>> = {
  max_steps: 'it reached its limit of model calls',
  budget: 'it reached its token or cost budget',
  timeout: 'it ran out of time',
  no_progress: 'it kept repeating the same actions',
};

/** The user message of that request: no tools, the best answer now (as JSON of the schema when there is one). */
export function finalAnswerInstruction(reason: StopReasonCode, schema: unknown): string {
  const head = `The run has been stopped because ${WHY[reason] ?? 'a limit was reached'}; no tools can be called any more. `;
  if (schema === undefined) {
    return `${head}From what has been done so far, give the best final answer you can now, saying briefly what is incomplete or uncertain.`;
  }
  return `${head}From what has been done so far, give the best final answer you can now, as a single JSON object matching this JSON Schema, and nothing else:\n${JSON.stringify(schema)}`;
}

/**
 * The tokens the request may use at most: the context as the last answer saw it (its input
 * and output), what was added since (about 4 characters a token), and the output allowance.
 */
export function finalAnswerUsage(messages: readonly Message[], instruction: string, outputTokens: number): Usage {
  let input = 0;
  let since = instruction.length;
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role === 'assistant' && m.usage.input + m.usage.output > 0) {
      input = m.usage.input + m.usage.cacheRead + m.usage.cacheWrite + m.usage.output;
      break;
    }
    since += JSON.stringify(m.content).length;
  }
  input += Math.ceil(since / 4);
  return { input, output: outputTokens, cacheRead: 0, cacheWrite: 0, reasoning: 0, total: input + outputTokens };
}

/** Whether the budget still pays for `usage` (costed as `cost`, `undefined` when the price is unknown). */
export function budgetPays(limits: RunLimits, totals: RunTotals, usage: Usage, cost: number | undefined): boolean {
  if (limits.maxTokens !== undefined && totals.usage.total + usage.total > limits.maxTokens) return false;
  // Without a price the cost budget is not enforced for any request; this one is no different.
  if (limits.maxCostUsd !== undefined && cost !== undefined && (totals.usage.cost?.total ?? 0) + cost > limits.maxCostUsd) return false;
  return true;
}
