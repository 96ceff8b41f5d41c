/**
 * `rein/testing`: a scripted model behind a real HTTP server that speaks every wire rein
 * supports (OpenAI Chat Completions and Responses, Anthropic Messages, Gemini), so agents
 * can be tested offline, deterministically, through the same adapter a real model uses.
 */
export { startScriptedServer } from './server.js';
export { startFixtureServer } from './fixture-server.js';
export type { FixtureServer, FixtureServerOptions } from './fixture-server.js';
export { FixturePlayer, loadFixture, parseFixture, playbackTransport, recordingTransport, recordTo } from '../model/fixture.js';
export type { Fixture, FixtureAnswer, FixtureDivergence, FixtureExchange, FixtureRedactor } from '../model/fixture.js';
export type { ReceivedRequest, ScriptedServer, ScriptedServerOptions } from './server.js';
export { fault, text, toolCall, toolCalls } from './script.js';
export type {
  ChatMessage,
  ChatRequest,
  ChatTool,
  Fault,
  Script,
  ScriptFunction,
  ScriptInfo,
  ScriptMessage,
  ScriptRequest,
  ScriptToolCall,
  ScriptTurn,
  ScriptUsage,
  SeenToolCall,
} from './script.js';
export { validateChatRequest } from './validate-chat.js';
export type { InvalidRequestBody } from './validate-chat.js';
export { validateAnthropicRequest } from './validate-anthropic.js';
export type { AnthropicErrorBody } from './validate-anthropic.js';
export { validateResponsesRequest } from './validate-responses.js';
export { validateGeminiRequest } from './validate-gemini.js';
export type { GeminiErrorBody } from './validate-gemini.js';
