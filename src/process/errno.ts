/** Reading the code of a failed system call, whichever part of rein made it. */

/** The `code` of a Node system error (`ENOENT`, …), if it is one. */
export function errnoOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}
