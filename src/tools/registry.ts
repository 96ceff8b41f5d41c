/**
 * The tools of an agent, by name. The dispatcher looks calls up here at call time, so tools
 * added later (an MCP server connecting, a skill loading) are callable from the next turn.
 */
import { ReinError } from '../errors.js';
import type { ToolSpec } from '../model/types.js';
import { assertValidTool } from './define.js';
import type { Tool } from './types.js';

/**
 * A name → {@link Tool} map that refuses duplicates and invalid tools.
 *
 * @example
 * const registry = new ToolRegistry(seedTools());
 * registry.add(myTool);
 * const context = { messages, tools: registry.specs() };
 */
export class ToolRegistry {
  private readonly tools = new Map<string, Tool>();
  private cachedSpecs: ToolSpec[] | undefined;
  private cachedList: readonly Tool[] | undefined;

  /** Registers `tools` in order; throws like {@link ToolRegistry.add}. */
  constructor(tools: Iterable<Tool> = []) {
    for (const tool of tools) this.add(tool);
  }

  /**
   * Registers a tool. Throws a `config` {@link ReinError} when the name is taken or the
   * tool is invalid (see {@link assertValidTool}).
   */
  add(tool: Tool): this {
    assertValidTool(tool);
    if (this.tools.has(tool.name)) {
      throw new ReinError(
        'config',
        'fatal',
        `tool "${tool.name}" is already registered: tool names must be unique (rename one, or remove the other first)`,
      );
    }
    this.tools.set(tool.name, tool);
    this.invalidate();
    return this;
  }

  /** Unregisters a tool; returns whether it was there. */
  remove(name: string): boolean {
    const removed = this.tools.delete(name);
    if (removed) this.invalidate();
    return removed;
  }

  /** The tool of that name, if registered. */
  get(name: string): Tool | undefined {
    return this.tools.get(name);
  }

  /** Whether a tool of that name is registered. */
  has(name: string): boolean {
    return this.tools.has(name);
  }

  /** Registered names, in registration order. */
  names(): string[] {
    return [...this.tools.keys()];
  }

  /** Registered tools, in registration order. */
  list(): readonly Tool[] {
    this.cachedList ??= Object.freeze([...this.tools.values()]);
    return this.cachedList;
  }

  /**
   * What the model is told about the tools, in registration order. Built once per change
   * of the registry (the loop asks every turn); the `parameters` objects are the tools'
   * own, so treat them as read-only.
   */
  specs(): ToolSpec[] {
    this.cachedSpecs ??= [...this.tools.values()].map((t) => ({
      name: t.name,
      description: t.description,
      parameters: t.parameters,
    }));
    return this.cachedSpecs.slice();
  }

  /** How many tools are registered. */
  get size(): number {
    return this.tools.size;
  }

  private invalidate(): void {
    this.cachedSpecs = undefined;
    this.cachedList = undefined;
  }
}

/** Shorthand for `new ToolRegistry(tools)`. */
export function createRegistry(tools: Iterable<Tool> = []): ToolRegistry {
  return new ToolRegistry(tools);
}
