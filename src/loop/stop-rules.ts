/**
 * The stop rules that need memory across turns. Each is a small tracker fed by the loop;
 * the loop itself decides the order in which they are asked.
 */
import type { ToolResultMessage } from '../model/types.js';
import { canonicalJson } from '../util/canonical-json.js';

/**
 * `no_progress`: the model makes no headway when its turns repeat — the same batch of
 * calls (tool and canonically equal arguments) N turns in a row, or a cycle of 2 or 3
 * batches (A, B, A, B, …) repeated N times. A batch is one turn: three equal calls in one
 * answer ("roll three dice") are one turn, not three repeats. Key order in arguments is
 * ignored, and so is the order of calls within a batch.
 */
export class RepeatTracker {
  /** The signature of each recent turn, oldest first (at most {@link MAX_PERIOD} × limit). */
  private readonly turns: string[] = [];

  constructor(private readonly limit: number) {}

  /** Records one turn's calls; the reason, naming the repeated calls, once the limit is reached. */
  recordTurn(calls: ReadonlyArray<{ name: string; args: unknown }>): string | undefined {
    if (this.limit <= 0) return undefined;
    const turn = calls
      .map((call) => `${call.name} ${canonicalJson(call.args)}`)
      .sort()
      .join(' + ');
    this.turns.push(turn);
    if (this.turns.length > MAX_PERIOD * this.limit) this.turns.shift();
    for (let period = 1; period <= MAX_PERIOD; period++) {
      if (!this.cycles(period)) continue;
      const cycle = this.turns.slice(-period).map(shown);
      return period === 1
        ? `the same calls were made ${this.limit} turns in a row: ${cycle[0]}`
        : `the same ${period} turns repeated ${this.limit} times in a cycle: ${cycle.join(', then ')}`;
    }
    return undefined;
  }

  /** Whether the last `limit` × `period` turns repeat with that period (and not a shorter one). */
  private cycles(period: number): boolean {
    const span = period * this.limit;
    const { turns } = this;
    if (turns.length < span) return false;
    for (let i = turns.length - span + period; i < turns.length; i++) if (turns[i] !== turns[i - period]) return false;
    // A, A is period 1, already asked; a cycle's turns must differ from each other.
    return period === 1 || new Set(turns.slice(-period)).size === period;
  }
}

/** The longest cycle of turns {@link RepeatTracker} looks for. */
const MAX_PERIOD = 3;

/** One turn's calls as a reason shows them: cut to a readable length. */
function shown(turn: string): string {
  return turn.length > 240 ? `${turn.slice(0, 239)}…` : turn;
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
