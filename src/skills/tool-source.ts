/**
 * Narrowing an agent's tools by the active skills without touching the loop: a
 * {@link ToolSource} whose tools are those the session allows now. The agent asks a source
 * for its tools every turn, so a skill activated in one turn narrows the next.
 */
import type { Tool, ToolSource } from '../tools/types.js';
import type { SkillSession } from './session.js';

/**
 * A tool source offering `tools` filtered by `session` ({@link SkillSession.filterTools}).
 * Give the agent the skill tools and every tool skills may narrow through it. The array
 * handed out changes only when a skill is activated (the agent rebuilds its view then).
 *
 * @example
 * const session = new SkillSession(skills);
 * const agent = new Agent({
 *   model,
 *   system: skillsCatalog(skills),
 *   toolSources: [skillToolSource([...createSkillTools(skills, session), ...myTools], session)],
 * });
 */
export function skillToolSource(tools: readonly Tool[], session: SkillSession, id = 'skills'): ToolSource {
  // A frozen copy: the source's list must not change under its consumers, and the filter
  // may hand back `tools` itself.
  let current: readonly Tool[] = Object.freeze([...session.filterTools(tools)]);
  const listeners = new Set<() => void>();
  session.onChange(() => {
    const next = session.filterTools(tools);
    if (next.length === current.length && next.every((tool, i) => tool === current[i])) return;
    current = Object.freeze([...next]);
    for (const listener of [...listeners]) listener();
  });
  return {
    id,
    tools: () => current,
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
