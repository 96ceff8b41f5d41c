/**
 * A server's current tool list: replaced only when it really differs (so the host's tool
 * array, and everything cached on it, survives a refresh that changed nothing), and
 * refreshed at most once more for any number of `list_changed` notifications arriving
 * while a refresh runs.
 */
import { toolsSignature, type ServerTool } from './server-tools.js';

/** See the module comment. */
export class ToolList {
  tools: readonly ServerTool[] = [];
  private signature = '';
  private running: Promise<void> | undefined;
  private again = false;

  /** Replaces the list; `true` when it differs from the current one. */
  set(tools: ServerTool[]): boolean {
    const signature = toolsSignature(tools);
    if (signature === this.signature) return false;
    this.signature = signature;
    this.tools = tools;
    return true;
  }

  /**
   * Lists again with `fetch` (which answers `undefined` when its answer is stale: the
   * connection changed meanwhile) and calls `changed` when the list differs. A refresh
   * asked for while one runs makes that one list once more.
   */
  refresh(fetch: () => Promise<ServerTool[] | undefined>, changed: () => void, failed: (error: unknown) => void): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    const run = async (): Promise<void> => {
      try {
        do {
          this.again = false;
          const tools = await fetch();
          if (tools === undefined) return;
          if (this.set(tools)) changed();
        } while (this.again);
      } catch (error) {
        failed(error);
      } finally {
        this.running = undefined;
      }
    };
    this.running = run();
    return this.running;
  }

  /** The refresh in progress, if any. */
  get pending(): Promise<void> | undefined {
    return this.running;
  }
}
