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

/**
 * `no_progress`: the same tool with canonically equal arguments N times in a row (across
 * turns). Any different call resets the count.
 */
export class RepeatTracker {
  private last = '';
  private count = 0;

  constructor(private readonly limit: number) {}

  /** Records one call; true when the limit is reached. */
  record(name: string, args: unknown): boolean {
    const signature = `${name}\u0000${canonicalJson(args)}`;
    if (signature === this.last) this.count++;
    else {
      this.last = signature;
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
  record(results: readonly ToolResultMessage[]): boolean {
    for (const result of results) {
      if (result.isError) this.consecutive++;
      else this.consecutive = 0;
    }
    return this.limit > 0 && this.consecutive >= this.limit;
  }

  get count(): number {
    return this.consecutive;
  }
}
