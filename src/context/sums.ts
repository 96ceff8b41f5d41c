/**
 * Running token sums over the message arrays of a run, so a request's count costs only
 * the messages added since the last one. The loop appends to one history array; a sum
 * remembers how far it counted and checks the array's ends to see it only grew.
 */
import type { Message } from '../model/types.js';
import type { TokenCounter } from './tokens.js';

/** A running sum over one array. */
interface Sum {
  array: readonly Message[] | undefined;
  version: number;
  length: number;
  first: Message | undefined;
  last: Message | undefined;
  raw: number;
}

const emptySum = (): Sum => ({ array: undefined, version: -1, length: 0, first: undefined, last: undefined, raw: 0 });

/** The sums of one run: its history, and the last other array sent (what `transformContext` made of it). */
export class MessageSums {
  private readonly history = emptySum();
  private readonly other = emptySum();
  /** Counts of messages seen in other arrays, so a hook's new array each turn is not recounted from scratch. */
  private counts: Map<Message, number> | undefined;

  constructor(private readonly counter: TokenCounter) {}

  /** Raw tokens of the history, counting only what was added since the last call. */
  ofHistory(messages: readonly Message[]): number {
    return this.sum(messages, this.history, undefined);
  }

  /** Raw tokens of an array sent instead of the history (or the history itself). */
  ofRequest(messages: readonly Message[]): number {
    const history = this.history;
    if (messages === history.array) {
      // The usual request: the history itself, just summed for the turn's estimate.
      if (
        history.version === this.counter.version &&
        history.length === messages.length &&
        history.last === messages[messages.length - 1] &&
        history.first === messages[0]
      )
        return history.raw;
      return this.sum(messages, history, undefined);
    }
    let counts = (this.counts ??= new Map());
    // A hook that makes new message objects every turn would grow the map without end.
    if (counts.size > 2 * messages.length + 1_000) counts = this.counts = new Map();
    return this.sum(messages, this.other, counts);
  }

  /** After a compaction: counts of replaced messages are dropped (they are never sent again). */
  forgetReplaced(): void {
    this.counts = undefined;
  }

  private sum(messages: readonly Message[], sum: Sum, counts: Map<Message, number> | undefined): number {
    const counter = this.counter;
    let from = 0;
    let raw = 0;
    if (
      sum.array === messages &&
      sum.version === counter.version &&
      sum.length <= messages.length &&
      sum.first === messages[0] &&
      sum.last === messages[sum.length - 1]
    ) {
      from = sum.length;
      raw = sum.raw;
    }
    for (let i = from; i < messages.length; i++) {
      const message = messages[i] as Message;
      let tokens = counts?.get(message);
      if (tokens === undefined) {
        tokens = counter.message(message);
        counts?.set(message, tokens);
      }
      raw += tokens;
    }
    sum.array = messages;
    sum.version = counter.version;
    sum.length = messages.length;
    sum.first = messages[0];
    sum.last = messages[messages.length - 1];
    sum.raw = raw;
    return raw;
  }
}
