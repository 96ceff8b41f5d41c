/**
 * `rein/permissions`: a permission policy as data — `allow` / `ask` / `deny` rules on tool
 * names and arguments, modes, defaults by risk — and secret redaction.
 *
 * @example
 * import { Agent } from 'rein';
 * import { createPermissionPolicy } from 'rein/permissions';
 * const policy = createPermissionPolicy({ allow: ['bash(git status*)'], deny: ['bash(rm *)'] });
 * const agent = new Agent({ model, tools, store, approvalPolicy: (call, tool) => policy.decide(call, tool) });
 */
export { createPermissionPolicy, parsePermissionMode, PERMISSION_MODES } from './policy.js';
export type {
  PermissionDecision,
  PermissionMode,
  PermissionOptions,
  PermissionPolicy,
  PermissionSnapshot,
  PermissionVerdict,
} from './policy.js';
export { parsePermissionRule, PermissionRule } from './rule.js';
export { loadPermissionsConfig, mergePermissionOptions, permissionsFromFlags } from './config.js';
export type { LoadedPermissions, PermissionDiagnostic } from './config.js';
export { suggestSessionRules } from './suggest.js';
export { decideSampling, SAMPLING_RULE } from './sampling.js';
export { createRedactor } from '../security/redact.js';
export type { Redactor, RedactorOptions } from '../security/redact.js';
export { redactingLog, redactingStore } from '../security/redacting-store.js';
