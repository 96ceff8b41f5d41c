/**
 * A scripted turn made concrete once, for every wire: call ids, argument text, the finish
 * reason and token counts. The `wire-*.ts` files only render it.
 */
import { createHash } from 'node:crypto';
import type { ScriptTurn } from './script.js';

/** A tool call with its id and argument text decided. */
export interface ResolvedCall {
  id: string;
  name: string;
  arguments: string;
}

/**
 * Token counts with Chat Completions' meaning: `prompt` includes `cached`, `completion`
 * includes `reasoning`, `total` is what the script said or prompt + completion.
 */
export interface Tokens {
  prompt: number;
  completion: number;
  total: number;
  cached: number;
  reasoning: number;
}

/** Everything needed to send one turn, decided once for both wire modes. */
export interface Answer {
  /** The response id in the wire's own style (`chatcmpl-…`, `msg_…`, `resp_…`). */
  id: string;
  /** A per-server counter, for item ids derived from the response (`rs_…`, `fc_…`). */
  serial: number;
  created: number;
  model: string;
  turn: ScriptTurn;
  calls: ResolvedCall[];
  /** In Chat Completions' words; `null` leaves the field out. */
  finishReason: string | null;
  tokens: Tokens;
}

function estimateTokens(turn: ScriptTurn, calls: ResolvedCall[], promptChars: number): Tokens {
  // About four characters per token: rough, but deterministic and proportional to size,
  // which is all budget and compaction tests need.
  const thinking = turn.thinking?.length ?? 0;
  let output = (turn.text?.length ?? 0) + thinking;
  for (const call of calls) output += call.name.length + call.arguments.length;
  const given = turn.usage ?? {};
  const prompt = given.prompt_tokens ?? Math.ceil(promptChars / 4);
  const completion = given.completion_tokens ?? Math.ceil(output / 4);
  return {
    prompt,
    completion,
    total: given.total_tokens ?? prompt + completion,
    cached: given.prompt_tokens_details?.cached_tokens ?? 0,
    reasoning: given.completion_tokens_details?.reasoning_tokens ?? Math.ceil(thinking / 4),
  };
}

/** Decides ids, argument text, finish reason and token counts of a turn. */
export function resolveAnswer(
  turn: ScriptTurn,
  ids: { response: string; serial: number; nextCallId: () => string },
  model: string,
  promptChars: number,
): Answer {
  const calls: ResolvedCall[] = (turn.toolCalls ?? []).map((call) => ({
    id: call.id ?? ids.nextCallId(),
    name: call.name,
    arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments),
  }));
  const finishReason = turn.finishReason === undefined ? (calls.length > 0 ? 'tool_calls' : 'stop') : turn.finishReason;
  return {
    id: ids.response,
    serial: ids.serial,
    created: Math.floor(Date.now() / 1000),
    model,
    turn,
    calls,
    finishReason,
    tokens: estimateTokens(turn, calls, promptChars),
  };
}

/** Splits text into pieces of `size` UTF-16 units without splitting a surrogate pair. */
export function pieces(text: string, size: number): string[] {
  const out: string[] = [];
  let start = 0;
  while (start < text.length) {
    let end = Math.min(start + size, text.length);
    const last = text.charCodeAt(end - 1);
    if (last >= 0xd800 && last <= 0xdbff && end < text.length) end++;
    out.push(text.slice(start, end));
    start = end;
  }
  return out;
}

/**
 * The arguments as the object wires (Anthropic `input`, Gemini `args`) carry them. Text
 * that is not a JSON object is sent as the string itself: the script asked for malformed
 * arguments, and a decoder should see them rather than a silently repaired `{}`.
 */
export function argumentsValue(call: ResolvedCall): unknown {
  try {
    const parsed: unknown = JSON.parse(call.arguments);
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) return parsed;
  } catch {
    // fall through: sent verbatim
  }
  return call.arguments;
}

const SIGNATURE_PREFIX = Buffer.from('rein-scripted\0');

/**
 * A fake but stable signature for `content` (thinking text, a function call): base64 like
 * the real ones, the same for the same content, so a validator can tell whether a client
 * sent back what it received unchanged, as Anthropic checks thinking signatures.
 */
export function fakeSignature(kind: string, content: string): string {
  const digest = createHash('sha256').update(kind).update('\0').update(content).digest();
  return Buffer.concat([SIGNATURE_PREFIX, digest]).toString('base64');
}

/** Maps a Chat Completions finish reason to another wire's words; unknown ones pass as they are. */
export function mapFinish(reason: string, table: Record<string, string>): string {
  return table[reason] ?? reason;
}
