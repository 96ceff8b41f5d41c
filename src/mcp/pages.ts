/**
 * Every page of an MCP list request (`tools/list`, `resources/list`,
 * `resources/templates/list`, `prompts/list`): cursors are followed until the server stops
 * sending one. A cursor the server sends twice, or a list longer than {@link MAX_PAGES}
 * pages, is an error naming the page, never a silently shortened list.
 */

/** Safety net against a server whose cursor never ends. */
export const MAX_PAGES = 1000;

/** One page as a list request answers it. */
export interface Page<T> {
  items: T[];
  nextCursor?: string | undefined;
}

/** A list request failed part-way: what came before the failing page is kept. */
export class PageError<T> extends Error {
  constructor(
    message: string,
    /** Items of the pages read before the failure. */
    readonly partial: T[],
    /** 1-based number of the page that failed. */
    readonly page: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'PageError';
  }
}

/**
 * Calls `fetch` with each cursor in turn and returns every item. A failing first page
 * throws its own error; a later page failing, a repeated cursor or pages without end
 * throw a {@link PageError} with the items read so far.
 */
export async function allPages<T>(method: string, fetch: (cursor: string | undefined) => Promise<Page<T>>): Promise<T[]> {
  const items: T[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  for (let page = 1; page <= MAX_PAGES; page++) {
    let result: Page<T>;
    try {
      result = await fetch(cursor);
    } catch (error) {
      // The first page failing is the request failing: its error is passed on as it is.
      if (page === 1) throw error;
      const message = error instanceof Error ? error.message : String(error);
      throw new PageError(`${method} failed on page ${page}: ${message}`, items, page, { cause: error });
    }
    items.push(...result.items);
    cursor = result.nextCursor;
    if (cursor === undefined || cursor === '') return items;
    if (seen.has(cursor))
      throw new PageError(`${method}: the server sent cursor ${JSON.stringify(cursor)} twice (page ${page + 1}); stopped`, items, page + 1);
    seen.add(cursor);
  }
  throw new PageError(`${method}: more than ${MAX_PAGES} pages; stopped`, items, MAX_PAGES + 1);
}
