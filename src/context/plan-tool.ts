/**
 * `update_plan`: how the model writes the plan part of the task layer. The tool itself
 * only checks and acknowledges; the plan is read back from the call's arguments when the
 * task record is derived (see `task.ts`), so it is part of the run's log like every step.
 */
import { defineTool } from '../tools/define.js';
import type { Tool } from '../tools/types.js';

/** The name the task record looks for. */
export const PLAN_TOOL_NAME = 'update_plan';

const MAX_STEPS = 30;

/**
 * The `update_plan` tool (risk `read`, effect `pure`). Offer it with
 * `context: { planTool: true }`, or add it to `tools` yourself.
 *
 * @example
 * const agent = new Agent({ model, tools: [readFile, updatePlanTool], context: { task: 'always' } });
 */
export const updatePlanTool: Tool = defineTool({
  name: PLAN_TOOL_NAME,
  description:
    'Set or replace your plan for this task: the remaining steps, in order, one short sentence each. ' +
    'Call it when you start a multi-step task and whenever the plan changes. The plan is shown back to you every turn.',
  parameters: {
    type: 'object',
    properties: {
      steps: {
        type: 'array',
        items: { type: 'string', minLength: 1 },
        minItems: 1,
        maxItems: MAX_STEPS,
        description: 'The remaining steps, in order.',
      },
    },
    required: ['steps'],
    additionalProperties: false,
  },
  risk: 'read',
  effect: 'pure',
  execute: ({ steps }) => {
    const list = steps as string[];
    return `Plan updated (${list.length} step${list.length === 1 ? '' : 's'}). It is shown to you with the task from now on.`;
  },
});
