/**
 * An agent's tools: its own, fixed at construction, plus those of its tool sources (MCP
 * servers), which come and go. The dispatcher looks every call up here and the loop asks
 * for the specs every turn, so a source's change is seen from the next turn on; the merged
 * view is rebuilt only when a source hands out a different array.
 */
import { nameGlobMatcher } from '../tools/name-glob.js';
import { ReinError } from '../errors.js';
import type { ToolSpec } from '../model/types.js';
import type { ToolRegistry } from '../tools/registry.js';
import type { Tool, ToolSource } from '../tools/types.js';

/** A name clash between a source's tool and another tool: the source's is left out. */
export interface ToolConflict {
  source: string;
  name: string;
}

export class AgentTools {
  private seen: Array<readonly Tool[]> = [];
  private merged = new Map<string, Tool>();
  private specsCache: ToolSpec[] = [];
  private listCache: readonly Tool[] = [];
  private conflictList: ToolConflict[] = [];

  private readonly allowed: ((name: string) => boolean) | undefined;

  /**
   * `allowedTools` (names, or `*` globs such as `github__*`) is the agent's least privilege:
   * a tool it does not list is neither offered to the model nor callable.
   */
  constructor(
    private readonly own: ToolRegistry,
    private readonly sources: readonly ToolSource[],
    allowedTools?: readonly string[],
  ) {
    this.allowed = allowedTools ? nameMatcher(allowedTools) : undefined;
    this.rebuild();
  }

  /** The tool of that name, own or from a source. */
  get(name: string): Tool | undefined {
    this.refresh();
    return this.merged.get(name);
  }

  names(): string[] {
    this.refresh();
    return [...this.merged.keys()];
  }

  list(): readonly Tool[] {
    this.refresh();
    return this.listCache;
  }

  /** What the model is told this turn (the same array until something changes). */
  specs(): ToolSpec[] {
    this.refresh();
    return this.specsCache;
  }

  /** Source tools left out because their name was taken. */
  conflicts(): readonly ToolConflict[] {
    this.refresh();
    return this.conflictList;
  }

  private refresh(): void {
    const sources = this.sources;
    for (let i = 0; i < sources.length; i++) {
      if ((sources[i] as ToolSource).tools() !== this.seen[i]) {
        this.rebuild();
        return;
      }
    }
  }

  private rebuild(): void {
    const merged = new Map<string, Tool>();
    const allowed = this.allowed;
    for (const tool of this.own.list()) if (!allowed || allowed(tool.name)) merged.set(tool.name, tool);
    const conflicts: ToolConflict[] = [];
    this.seen = this.sources.map((source) => {
      const tools = source.tools();
      for (const tool of tools) {
        if (allowed && !allowed(tool.name)) continue;
        if (merged.has(tool.name)) conflicts.push({ source: source.id, name: tool.name });
        else merged.set(tool.name, tool);
      }
      return tools;
    });
    this.merged = merged;
    this.listCache = Object.freeze([...merged.values()]);
    this.specsCache = this.listCache.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters }));
    this.conflictList = conflicts;
  }
}

/**
 * Matches tool names against names and `*` / `?` globs. Tool names are letters, digits,
 * `_` and `-`, so no other glob syntax is needed (and none is accepted silently).
 */
export function nameMatcher(patterns: readonly string[]): (name: string) => boolean {
  for (const pattern of patterns) {
    if (!/^[a-zA-Z0-9_*?-]+$/.test(pattern)) {
      throw new ReinError(
        'config',
        'fatal',
        `allowedTools: "${pattern}" is not a tool name or glob: use letters, digits, _ and -, with * or ? as wildcards (e.g. "github__*")`,
      );
    }
  }
  return nameGlobMatcher(patterns);
}
