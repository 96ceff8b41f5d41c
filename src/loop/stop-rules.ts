/**
 * The stop rules that need memory across turns. Each is a small tracker fed by the loop;
 * the loop itself decides the order in which they are asked.
 */
import type { ToolResultMessage } from '../model/types.js';

/** JSON with object keys sorted, so `{a:1,b:2}` and `{b:2,a:1}` are the same call. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record).filter((k) => record[k] !== undefined).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(record[k])}`).join(',')}}`;
}

/** Deep equality of JSON values, ignoring object key order (the canonical form's equality). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let count = 0;
  for (const key in x) {
    if (x[key] === undefined) continue;
    count++;
    if (!jsonEqual(x[key], y[key])) return false;
  }
  for (const key in y) if (y[key] !== undefined) count--;
  return count === 0;
}

/**
 * `no_progress`: the same tool with canonically equal arguments N times in a row (across
 * turns). Any different call resets the count. Compared structurally (key order ignored),
 * which is what equality of {@link canonicalJson} forms means, without building strings on
 * every call.
 */
export class RepeatTracker {
  private lastName: string | undefined;
  private lastArgs: unknown;
  private count = 0;

  constructor(private readonly limit: number) {}

  /** Records one call; true when the limit is reached. */
  record(name: string, args: unknown): boolean {
    if (name === this.lastName && jsonEqual(args, this.lastArgs)) this.count++;
    else {
      this.lastName = name;
      this.lastArgs = args;
      this.count = 1;
    }
    return this.limit > 0 && this.count >= this.limit;
  }

  /** How many times in a row the last call was seen. */
  get repeats(): number {
    return this.count;
  }
}

/** `tool_errors`: a circuit breaker over consecutive failing tool results. */
export class ToolErrorBreaker {
  private consecutive = 0;

  constructor(private readonly limit: number) {}

  /** Records a batch's results in call order; true when the breaker trips. */
  recordOutcomes(outcomes: readonly { result: ToolResultMessage }[]): boolean {
    for (const outcome of outcomes) {
      if (outcome.result.isError) this.consecutive++;
      else this.consecutive = 0;
    }
    return this.limit > 0 && this.consecutive >= this.limit;
  }

  get count(): number {
    return this.consecutive;
  }
}
