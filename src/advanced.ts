/**
 * `rein/advanced`: the parts the agent is built from, for programs that build their own
 * loop, provider or dispatcher: what a typical program never needs (it uses `Agent`).
 * Explicit named exports only (STYLE 11).
 */
export { runLoop } from './loop/run-loop.js';
export type { LoopDeps, LoopStart } from './loop/deps.js';
export { canonicalJson } from './util/canonical-json.js';

export { EventStream } from './model/event-stream.js';
export { streamWithRetry } from './model/retry.js';
export { streamModel } from './model/providers/index.js';
export { streamOpenAIChat } from './model/providers/openai-chat.js';

export { ToolRegistry } from './tools/registry.js';
export { createDispatcher } from './tools/dispatch.js';
export type { Dispatcher } from './tools/dispatch.js';
export { createFinalAnswerTool, FINAL_ANSWER_TOOL } from './tools/final-answer.js';

// The context engine's rules, for programs that compact or summarise histories themselves.
export { DEFAULT_KEEP_TURNS, DEFAULT_THRESHOLD, shouldCompact, splitForCompaction } from './context/compaction.js';
export type { CompactionSplit } from './context/compaction.js';
export { DEFAULT_SUMMARY_MAX_TOKENS, isSummaryMessage, isSummaryRequest, SUMMARY_HEADER } from './context/summary.js';
export { renderTask, taskFromEvents } from './context/task.js';
export type { TaskRecord } from './context/task.js';
