/**
 * The names under which MCP tools reach the model: `<server>__<tool>` by default, always
 * valid for every provider (`^[a-zA-Z0-9_-]{1,64}$`) and unique across servers.
 */
import { createHash } from 'node:crypto';

const MAX = 64;

/**
 * Makes `name` a valid tool name: characters outside `[a-zA-Z0-9_-]` become `_`, and a name
 * longer than 64 keeps its start plus a short hash of the whole (so two long names that
 * share a start stay apart).
 *
 * @example
 * sanitizeToolName('github__search.issues'); // 'github__search_issues'
 */
export function sanitizeToolName(name: string): string {
  let clean = name.replace(/[^a-zA-Z0-9_-]/g, '_');
  if (clean === '') clean = 'tool';
  if (clean.length <= MAX) return clean;
  const hash = createHash('sha256').update(name).digest('hex').slice(0, 8);
  return `${clean.slice(0, MAX - 9)}_${hash}`;
}

/**
 * Hands out unique names: the first tool gets its name, later ones with the same name get
 * `_2`, `_3`… (still within 64 characters). Used once per rebuild of the host's tool list,
 * in configuration order, so names are stable while the servers' lists are.
 */
export class ToolNamer {
  private readonly taken = new Set<string>();

  constructor(reserved: Iterable<string> = []) {
    for (const name of reserved) this.taken.add(name);
  }

  /** A fresh valid name for `wanted`. */
  name(wanted: string): string {
    const base = sanitizeToolName(wanted);
    let candidate = base;
    for (let n = 2; this.taken.has(candidate); n++) {
      const suffix = `_${n}`;
      candidate = `${base.slice(0, MAX - suffix.length)}${suffix}`;
    }
    this.taken.add(candidate);
    return candidate;
  }
}
