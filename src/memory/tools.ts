/**
 * The memory tools: `remember` writes a note to the project's memory, `recall` searches
 * it, and (opt-in) `forget` deletes a note that turned out wrong.
 */
import { defineTool } from '../tools/define.js';
import type { Tool, ToolOutput } from '../tools/types.js';
import { formatSnippet } from './layer.js';
import { ftsQuery } from './query.js';
import { MAX_MEMORY_CHARS } from './sqlite-memory.js';
import type { MemoryStore } from './types.js';

/** Options of {@link createMemoryTools}. */
export interface MemoryToolsOptions {
  /** Also offer `forget` (default false: a model deleting notes is rarely what a person wants). */
  forget?: boolean;
}

/**
 * `remember` (risk `write`, effect `idempotent`: the same text is stored once) and
 * `recall` (`read`, `pure`) over a memory store; `forget` too when asked for.
 *
 * @example
 * const memory = await openMemory();
 * const agent = new Agent({ model, tools: createMemoryTools(memory) });
 */
export function createMemoryTools(memory: MemoryStore, options: MemoryToolsOptions = {}): Tool[] {
  const remember = defineTool({
    name: 'remember',
    description:
      'Save a fact worth knowing in later sessions of this project (a decision, a convention, where something lives, how to run something). ' +
      'Write one self-contained sentence or short paragraph; do not save secrets or what is already in the code.',
    parameters: {
      type: 'object',
      properties: {
        text: { type: 'string', minLength: 1, maxLength: MAX_MEMORY_CHARS, description: 'The note, self-contained.' },
        tags: { type: 'array', items: { type: 'string' }, description: 'A few words to find it by (optional).' },
      },
      required: ['text'],
      additionalProperties: false,
    },
    risk: 'write',
    effect: 'idempotent',
    execute: ({ text, tags }, ctx): ToolOutput => {
      const result = memory.remember(String(text), { tags: Array.isArray(tags) ? tags.map(String) : [], source: `run ${ctx.runId}` });
      return {
        content: result.created ? `Remembered as memory ${result.id}.` : `Already remembered as memory ${result.id}.`,
        details: result,
      };
    },
  });

  const recall = defineTool({
    name: 'recall',
    description:
      'Search the notes saved with remember in earlier sessions of this project. ' +
      'Give the words the note would contain; results come best first, each with its id.',
    parameters: {
      type: 'object',
      properties: {
        query: { type: 'string', minLength: 1, description: 'Words to search for.' },
        limit: { type: 'integer', minimum: 1, maximum: 20, default: 5, description: 'How many notes at most.' },
      },
      required: ['query'],
      additionalProperties: false,
    },
    risk: 'read',
    effect: 'pure',
    execute: async ({ query, limit }, ctx): Promise<ToolOutput> => {
      const q = String(query);
      if (ftsQuery(q) === undefined) {
        return {
          content: `"${q}" has no word to search for: give the words the note would contain, such as "deploy staging"`,
          isError: true,
        };
      }
      const hits = await memory.retrieve(q, typeof limit === 'number' ? limit : 5, { signal: ctx.signal });
      if (hits.length === 0) return { content: `No saved note matches "${q}".`, details: { hits } };
      return { content: hits.map(formatSnippet).join('\n'), details: { hits } };
    },
  });

  const tools = [remember, recall];
  if (options.forget) {
    tools.push(
      defineTool({
        name: 'forget',
        description: 'Delete a saved note that turned out wrong or outdated, by the id recall showed.',
        parameters: {
          type: 'object',
          properties: { id: { type: 'string', description: 'The memory id, e.g. "12".' } },
          required: ['id'],
          additionalProperties: false,
        },
        risk: 'write',
        effect: 'idempotent',
        execute: ({ id }): ToolOutput =>
          memory.forget(String(id))
            ? `Forgot memory ${String(id)}.`
            : { content: `There is no memory ${String(id)} in this project: use recall to find the id.`, isError: true },
      }),
    );
  }
  return tools;
}
