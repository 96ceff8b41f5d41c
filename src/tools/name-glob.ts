/**
 * Tool names matched against names and `*` / `?` globs: the agent's `allowedTools` and a
 * skill's `allowed-tools` read patterns the same way. Any other character is literal.
 */
export function nameGlobMatcher(patterns: Iterable<string>): (name: string) => boolean {
  const exact = new Set<string>();
  const globs: RegExp[] = [];
  for (const pattern of patterns) {
    if (!/[*?]/.test(pattern)) exact.add(pattern);
    else
      globs.push(
        new RegExp(
          `^${pattern
            .replace(/[.+^${}()|[\]\\]/g, '\\$&')
            .replace(/\*/g, '.*')
            .replace(/\?/g, '.')}$`,
        ),
      );
  }
  return (name) => exact.has(name) || globs.some((glob) => glob.test(name));
}
