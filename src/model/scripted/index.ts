/**
 * `rein/testing`: a scripted model behind a real OpenAI-compatible HTTP server, so agents
 * can be tested offline, deterministically, through the same adapter a real model uses.
 */
export { startScriptedServer } from './server.js';
export type { ScriptedServer, ScriptedServerOptions } from './server.js';
export { fault, text, toolCall, toolCalls } from './script.js';
export type {
  ChatMessage,
  ChatRequest,
  ChatTool,
  Fault,
  Script,
  ScriptFunction,
  ScriptInfo,
  ScriptToolCall,
  ScriptTurn,
  ScriptUsage,
} from './script.js';
export { validateChatRequest } from './validate.js';
export type { InvalidRequestBody } from './validate.js';
