/**
 * `rein/mcp`: rein as an MCP host. Servers come from `.mcp.json`, `~/.rein/mcp.json` or
 * code; their tools join an agent's through `toolSources`, behind the same dispatcher as
 * local tools. The official SDK is loaded only when a server is started.
 *
 * @example
 * import { startMcp } from 'rein/mcp';
 * const mcp = await startMcp();
 * const agent = new Agent({ model: 'openai/gpt-4o', toolSources: [mcp] });
 */
export { startMcp, McpHost } from './host.js';
export type { McpCallResult, McpHostOptions, McpToolInfo } from './host.js';
export { loadMcpConfig, defaultConfigFiles } from './config.js';
export { logoutMcpServer } from './auth/logout.js';
export type { LogoutOptions } from './auth/logout.js';
export type { LoadMcpConfigOptions } from './config.js';
export { expandVars } from './config-entry.js';
export type { ReconnectPolicy } from './backoff.js';
export { reconnectDelay } from './backoff.js';
export { DEFAULT_STARTUP_TIMEOUT_MS, DEFAULT_TIMEOUT_MS } from './connection.js';
export type { McpCallDetails } from './content.js';
export type { ExpandedMentions, ResourceMention } from './mentions.js';
export { findMentions } from './mentions.js';
export type { ExpandedPrompt, PromptCommand } from './prompts.js';
export { parsePromptCommand, promptUsage } from './prompts.js';
export type { ResourceContents, ResourceListing } from './resources.js';
export type { CompletionRef, Completions } from './completion.js';
export type { SamplingUsage } from './sampling.js';
export { modelSampler } from './model-sampler.js';
export type { ModelSamplerOptions, SamplingDecision } from './model-sampler.js';
export { sanitizeToolName } from './naming.js';
export type {
  McpAuthConfig,
  McpConfig,
  McpDiagnostic,
  McpElicitRequest,
  McpElicitResult,
  McpEvent,
  McpLogLevel,
  McpRoot,
  McpSamplingRequest,
  McpSamplingResult,
  McpHttpServerConfig,
  McpLogEntry,
  McpPromptInfo,
  McpResourceInfo,
  McpResourceTemplateInfo,
  McpServerCommon,
  McpServerConfig,
  McpServerState,
  McpServerStatus,
  McpStdioServerConfig,
  McpTransportKind,
} from './types.js';
