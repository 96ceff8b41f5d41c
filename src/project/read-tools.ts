/** What plan mode offers: only the tools that read. */
import type { Tool, ToolSource } from '../tools/types.js';

export function isReadTool(tool: Tool): boolean {
  return tool.risk === 'read';
}

/** A tool source offering only its read tools (cached per answer of the source). */
export function readToolsOf(source: ToolSource): ToolSource {
  let from: readonly Tool[] | undefined;
  let read: readonly Tool[] = [];
  return {
    id: source.id,
    tools: () => {
      const all = source.tools();
      if (all !== from) {
        from = all;
        read = all.filter(isReadTool);
      }
      return read;
    },
    ...(source.onChange ? { onChange: (listener: () => void) => (source.onChange as NonNullable<ToolSource['onChange']>)(listener) } : {}),
  };
}
