/**
 * `rein/project`: an agent in a project folder, assembled as `rein run` assembles it — the
 * workspace tools, MCP servers, the permission policy, skills, rules and memory.
 */
export { openProject } from './open.js';
export type { Project, ProjectOptions } from './open.js';
export { agentFromProject } from './agent.js';
export type { ProjectAgent } from './agent.js';
export { steerResourceUpdates } from './resource-updates.js';
