/**
 * `rein/memory`: memory that is real without extra services — SQLite FTS5, scoped per
 * project. Give it to `new Agent({ memory })` for `remember` / `recall` tools and memory
 * hits in each request, or implement {@link MemoryStore} over your own retrieval.
 *
 * @example
 * import { Agent } from 'rein';
 * import { openMemory } from 'rein/memory';
 * const memory = await openMemory(); // .rein/memory.db
 * const agent = new Agent({ model: 'openai/gpt-4o', memory });
 */
export { DEFAULT_MEMORY_PATH, openMemory, SqliteMemory } from './sqlite-memory.js';
export type { OpenMemoryOptions } from './sqlite-memory.js';
export { createMemoryTools } from './tools.js';
export type { MemoryToolsOptions } from './tools.js';
export { formatSnippet, memoryLayer } from './layer.js';
export type { MemoryLayerOptions } from './layer.js';
export type { MemoryRetriever, MemorySnippet, MemoryStore, RememberOptions, RememberResult, RetrieveOptions } from './types.js';
