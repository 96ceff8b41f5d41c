/**
 * Usage for answers whose server reported none, when no context engine runs
 * (`context: false`): rein's token count of each request (system prompt, tools, messages)
 * and of the answer, so that token and cost budgets still stop the run. The engine does
 * the same with its own counts, calibrated against the usage servers do report.
 */
import type { AssistantMessage, Context, ModelRef, Usage } from '../model/types.js';
import { MessageSums } from './sums.js';
import { createTokenCounter, type TokenCounter } from './tokens.js';

export class UsageEstimator {
  private readonly counter: TokenCounter;
  /** Counts each message once: the loop sends the same history array, grown, every turn. */
  private readonly sums: MessageSums;

  constructor(model: Pick<ModelRef, 'provider' | 'id' | 'api'>) {
    // The quick estimate (about four characters a token): loading a tokenizer for a figure
    // that only guards budgets is not worth its time.
    this.counter = createTokenCounter(model);
    this.sums = new MessageSums(this.counter);
  }

  /** The estimated usage of `response`, the answer to `request`. */
  estimate(request: Context, response: AssistantMessage): Usage {
    const { counter } = this;
    const system = request.system === undefined ? 0 : counter.text(request.system);
    const input = system + counter.tools(request.tools ?? []) + this.sums.ofRequest(request.messages);
    const output = counter.message(response);
    return { input, output, cacheRead: 0, cacheWrite: 0, reasoning: 0, total: input + output, estimated: true };
  }
}
