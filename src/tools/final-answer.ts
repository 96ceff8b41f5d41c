/**
 * The final-answer tool: how a run with an output schema ends (`done_signal`). The model
 * finishes by calling it; the normal dispatcher validates the arguments against the
 * schema, so a malformed answer comes back as an error result the model can fix.
 */
import type { JsonSchema, ToolResultMessage } from '../model/types.js';
import { assertValidTool, toJsonSchema } from './define.js';
import { parseBeforeExecute, standardValidate } from './standard-schema.js';
import type { Tool, ToolOutput } from './types.js';

/** The default name of the final-answer tool. */
export const FINAL_ANSWER_TOOL = 'final_answer';

/** The `details` of a successful final-answer result: `output` is the validated answer. */
export interface FinalAnswerDetails {
  kind: 'final_answer';
  output: Record<string, unknown>;
}

/** Options of {@link createFinalAnswerTool}. */
export interface FinalAnswerOptions {
  /** Tool name (default {@link FINAL_ANSWER_TOOL}). */
  name?: string;
  /** What the model reads; the default tells it to call this once, when done. */
  description?: string;
}

const DEFAULT_DESCRIPTION =
  'Call this exactly once, when the task is complete, with your final answer as the arguments. ' +
  'Calling it ends the run: do not call it before you have everything the answer needs.';

/**
 * Creates the tool a model calls to finish with a structured answer. `outputSchema` is a
 * JSON Schema, TypeBox or zod 4 object schema (typed `unknown` so the agent can pass its
 * option through; anything else throws a `config` ReinError). A zod schema's refinements
 * run too (an issue is an invalid-arguments error the model fixes); transforms do not
 * change the answer kept, which is the checked JSON. The result has
 * `terminate: true` and `details` of type {@link FinalAnswerDetails}, whose `output` is
 * the same object as the dispatch outcome's `arguments`.
 *
 * @example
 * const finish = createFinalAnswerTool({
 *   type: 'object',
 *   properties: { city: { type: 'string' }, population: { type: 'integer' } },
 *   required: ['city', 'population'],
 * });
 */
export function createFinalAnswerTool(outputSchema: unknown, options: FinalAnswerOptions = {}): Tool {
  const name = options.name ?? FINAL_ANSWER_TOOL;
  const parameters: JsonSchema = toJsonSchema(outputSchema, `output schema of tool "${name}"`);
  const validate = standardValidate(outputSchema as object);
  const tool: Tool = {
    name,
    description: options.description ?? DEFAULT_DESCRIPTION,
    parameters,
    execute: (args, ctx) => {
      const record = (): ToolOutput => {
        const details: FinalAnswerDetails = { kind: 'final_answer', output: args };
        return { content: 'final answer recorded', details, terminate: true };
      };
      // A zod schema's refinements must hold too; the answer kept is still the JSON the
      // model sent (checked, coerced, defaults filled), the same as the run log replays.
      return validate ? (parseBeforeExecute(validate, record)(args, ctx) as ToolOutput | Promise<ToolOutput>) : record();
    },
    risk: 'read',
  };
  assertValidTool(tool);
  return tool;
}

/** True for `details` produced by a final-answer tool (whatever its name). */
export function isFinalAnswerDetails(details: unknown): details is FinalAnswerDetails {
  return details !== null && typeof details === 'object' && (details as { kind?: unknown }).kind === 'final_answer' && 'output' in details;
}

/** The answer in a successful final-answer result, or undefined for any other result. */
export function finalAnswerOf(result: ToolResultMessage): Record<string, unknown> | undefined {
  return !result.isError && isFinalAnswerDetails(result.details) ? result.details.output : undefined;
}
