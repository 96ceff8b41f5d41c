/**
 * What servers taught rein while the process runs: the parameters a server refused (and
 * the form it takes instead), and the servers that refuse tools. One cache, keyed by base
 * URL and model (a refusal about the whole server, such as `stream_options`, is kept under
 * the base URL alone); it lives as long as the process, as a server's answer does.
 *
 * Reads are on every request, so they cost one size check while nothing was learned, and
 * one `Map` lookup per key after that; `generation` lets callers keep a value computed
 * from the cache until it changes.
 */
import type { ChatCompat, ToolCalling } from './types.js';

/** What one server (or one model on it) taught rein. */
export interface LearnedQuirks extends Partial<ChatCompat> {
  /** The server refused the `tools` parameter: tools go in the prompt. */
  toolCalling?: ToolCalling;
}

const learned = new Map<string, LearnedQuirks>();
let changes = 0;

/** The key of a model on a server; `modelId` `''` stands for the whole server. */
function keyOf(baseUrl: string, modelId: string): string {
  return `${baseUrl}\n${modelId}`;
}

/** Bumped by each change: a value derived from the cache stays good while this is the same. */
export function learnedGeneration(): number {
  return changes;
}

/**
 * What was learned about `modelId` at `baseUrl`: the server's own entry with the model's
 * on top; `undefined` when nothing was.
 */
export function learnedQuirks(baseUrl: string, modelId: string): LearnedQuirks | undefined {
  if (learned.size === 0) return undefined;
  const server = learned.get(keyOf(baseUrl, ''));
  const model = learned.get(keyOf(baseUrl, modelId));
  if (server === undefined) return model;
  return model === undefined ? server : { ...server, ...model };
}

/** Records what a server refused: for `modelId` at `baseUrl`, or for the whole server when `modelId` is `''`. */
export function learnQuirk(baseUrl: string, modelId: string, quirk: LearnedQuirks): void {
  const key = keyOf(baseUrl, modelId);
  learned.set(key, { ...learned.get(key), ...quirk });
  changes++;
}

/** Forgets everything learned (tests). */
export function forgetLearnedQuirks(): void {
  learned.clear();
  changes++;
}
