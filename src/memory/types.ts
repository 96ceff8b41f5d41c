/**
 * Memory as the harness sees it: something that, given the turn's query, answers the few
 * snippets worth putting in context. The built-in store is SQLite FTS5; a vector store or
 * a RAG service is another implementation of the same interface.
 */

/** One remembered (or retrieved) piece of text. */
export interface MemorySnippet {
  /** Stable id within its store (the built-in store: a decimal number). */
  id: string;
  text: string;
  /** Relevance, higher is better; comparable only within one answer of one store. */
  score: number;
  /** Where it came from (a run, a file, a URL), when known. */
  source?: string;
  /** Tags given when it was remembered. */
  tags?: string[];
  /** When it was remembered, in ms since the epoch. */
  createdAt: number;
}

/** Options of {@link MemoryRetriever.retrieve}. */
export interface RetrieveOptions {
  signal?: AbortSignal;
}

/**
 * What the context assembly consults each turn: the `k` snippets most relevant to
 * `query`, best first. An empty or meaningless query answers `[]`, never an error.
 */
export interface MemoryRetriever {
  retrieve(query: string, k: number, options?: RetrieveOptions): Promise<MemorySnippet[]>;
}

/** Options of {@link MemoryStore.remember}. */
export interface RememberOptions {
  /** Words to find it by besides its text (searched too). */
  tags?: string[];
  /** Where it came from (a run id, a file, a URL). */
  source?: string;
}

/** What {@link MemoryStore.remember} did. */
export interface RememberResult {
  id: string;
  /** False when the same text was already remembered in this project (its tags are merged). */
  created: boolean;
}

/** A memory that can also be written: what the `remember` / `recall` tools need. */
export interface MemoryStore extends MemoryRetriever {
  remember(text: string, options?: RememberOptions): RememberResult;
  /** Deletes a memory of this project; answers whether it existed. */
  forget(id: string): boolean;
}
