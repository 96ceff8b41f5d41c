/**
 * Runs a parameters schema's own validation (Standard Schema v1's `~standard.validate`:
 * zod 4, Valibot, ArkType) on arguments the JSON Schema check has already passed, so the
 * schema's refinements, transforms and defaults apply as its library defines them.
 *
 * Why both: the JSON Schema check (ajv) is what the model's arguments are repaired,
 * coerced and explained against, and it is all a tool written as JSON Schema or TypeBox
 * has; but a zod `.refine()` or `.transform()` has no JSON Schema form, and a user who
 * wrote one expects it to run, as it does in the other harnesses that take zod tools.
 */
import { ReinError } from '../errors.js';
import type { ToolContext, ToolReturn } from './types.js';

interface StandardIssue {
  readonly message: string;
  readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }>;
}
type StandardResult = { readonly value: unknown; readonly issues?: undefined } | { readonly issues: ReadonlyArray<StandardIssue> };
type StandardValidate = (value: unknown) => StandardResult | Promise<StandardResult>;

/**
 * Arguments the schema's own validation refused. The dispatcher reports it like a JSON
 * Schema failure (`invalid_arguments`, one line per issue), not as a failure of the tool.
 */
export class ArgumentIssues extends ReinError {
  readonly issues: string[];
  constructor(issues: string[]) {
    super('invalid_arguments', 'correctable', issues.join('; '));
    this.issues = issues;
  }
}

/** The schema's Standard Schema `validate`, bound to it; undefined for a plain JSON Schema or TypeBox. */
export function standardValidate(schema: object): StandardValidate | undefined {
  const standard = (schema as { '~standard'?: { validate?: unknown } })['~standard'];
  if (typeof standard?.validate !== 'function') return undefined;
  const validate = standard.validate as (value: unknown) => StandardResult | Promise<StandardResult>;
  return (value) => validate.call(standard, value);
}

/**
 * Wraps `execute` so it receives what `validate` makes of the arguments. Stays synchronous
 * when the validation is (zod's is, unless the schema has an async refinement), so a
 * synchronous tool keeps the dispatcher's promise-free path. Throws {@link ArgumentIssues}.
 */
export function parseBeforeExecute<A>(
  validate: StandardValidate,
  execute: (args: A, ctx: ToolContext) => ToolReturn | Promise<ToolReturn>,
): (args: Record<string, unknown>, ctx: ToolContext) => ToolReturn | Promise<ToolReturn> {
  const run = (result: StandardResult, ctx: ToolContext): ToolReturn | Promise<ToolReturn> => {
    if (result.issues) throw new ArgumentIssues(result.issues.map(describeIssue));
    return execute(result.value as A, ctx);
  };
  return (args, ctx) => {
    const result = validate(args);
    return result instanceof Promise ? result.then((settled) => run(settled, ctx)) : run(result, ctx);
  };
}

/** `parameter "items[2].name": Must be a URL`, in the words the JSON Schema errors use. */
function describeIssue(issue: StandardIssue): string {
  const path = (issue.path ?? []).map((segment) => (typeof segment === 'object' ? segment.key : segment));
  const subject = path.length === 0 ? 'the arguments' : `parameter "${pathText(path)}"`;
  return `${subject}: ${issue.message}`;
}

function pathText(path: PropertyKey[]): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out === '' ? String(key) : `.${String(key)}`;
  }
  return out;
}
