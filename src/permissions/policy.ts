/**
 * The permission policy: which tool calls run, which wait for a person, which are refused.
 * Precedence (docs/permissions.md): unknown tool → deny rules → plan mode → yolo mode →
 * session allow rules (over ask rules) → ask rules → allow rules → the default by risk.
 * Synchronous and cheap: a policy decides every tool call of every run.
 */
import { ReinError } from '../errors.js';
import type { Tool, ToolRisk } from '../tools/types.js';
import { coverage, quote, restricts, sessionOverride, subjectOf, whyNotCovered, type CallSubject, type PolicyEntry } from './match.js';
import { parsePermissionRule } from './rule.js';

/** What a policy answers for a call. */
export type PermissionDecision = 'allow' | 'ask' | 'deny';

/**
 * `default`: the rules and the defaults by risk. `acceptEdits`: tools of risk `write` are
 * allowed by default. `plan`: nothing but risk `read` runs. `yolo`: everything no deny rule
 * refuses runs without asking.
 */
export type PermissionMode = 'default' | 'acceptEdits' | 'plan' | 'yolo';

/** The modes, in the order help texts list them. */
export const PERMISSION_MODES: readonly PermissionMode[] = ['default', 'acceptEdits', 'plan', 'yolo'];

/** What a policy is made from: a mode, rule lists (rule text), and defaults by risk. */
export interface PermissionOptions {
  mode?: PermissionMode;
  allow?: string[];
  ask?: string[];
  deny?: string[];
  /** The decision for a call no rule meets, by the tool's risk (`unknown`: a tool declaring none). */
  defaults?: Partial<Record<ToolRisk | 'unknown', PermissionDecision>>;
}

/** A decision with the rule that made it, as the `permission_decided` event records it. */
export interface PermissionVerdict {
  decision: PermissionDecision;
  /** What decided: `deny bash(rm *)`, `default: risk write asks`, `mode plan: no side effects`. */
  rule: string;
  /** One sentence a model or a person reads. */
  reason: string;
}

/** The rules and mode a policy holds, as plain JSON. */
export interface PermissionSnapshot {
  mode: PermissionMode;
  allow: string[];
  ask: string[];
  deny: string[];
  sessionAllow: string[];
  sessionDeny: string[];
  defaults: Record<ToolRisk | 'unknown', PermissionDecision>;
}

/** A policy; see {@link createPermissionPolicy}. */
export interface PermissionPolicy {
  readonly mode: PermissionMode;
  /** True in `yolo` mode: a CLI shows a loud banner. */
  readonly isYolo: boolean;
  /** Decides one call. `tool` is undefined when no tool of that name is registered. */
  decide(call: { name: string; arguments: Record<string, unknown> }, tool: Tool | undefined): PermissionVerdict;
  /** Allows calls matching `rule` until the policy is dropped ("always, for this session"). Outranks ask rules, never deny rules or plan mode. */
  allowForSession(rule: string): void;
  /** Denies calls matching `rule` until the policy is dropped ("never, for this session"). */
  denyForSession(rule: string): void;
  /** One paragraph for people: the mode and the rules; in yolo mode, a warning in capitals. */
  describe(): string;
  toJSON(): PermissionSnapshot;
}

const BASE_DEFAULTS: Record<ToolRisk | 'unknown', PermissionDecision> = { read: 'allow', write: 'ask', execute: 'ask', unknown: 'ask' };
const DECISIONS: readonly PermissionDecision[] = ['allow', 'ask', 'deny'];
const VERB: Record<PermissionDecision, string> = { allow: 'allows', ask: 'asks', deny: 'denies' };
/** How {@link PermissionPolicy.describe} says what a default does to a kind of tool. */
const DOES: Record<PermissionDecision, string> = { allow: 'run', ask: 'ask', deny: 'are refused' };
const DEFAULT_REASON: Record<ToolRisk | 'unknown', string> = {
  read: 'read-only tools',
  write: 'tools that change files',
  execute: 'tools that run commands',
  unknown: 'tools that declare no risk',
};

/** The entries of the policy whose name glob meets one tool name, cached per name. */
interface Bucket {
  deny: PolicyEntry[];
  ask: PolicyEntry[];
  /** Configured allow entries, then session ones. */
  allow: PolicyEntry[];
  sessionAllow: PolicyEntry[];
  /** True when some deny or ask entry has an argument pattern. */
  argumentRestricted: boolean;
}

/**
 * Builds a policy. Throws a `config` {@link ReinError} for a bad rule, mode or default.
 *
 * @example
 * const policy = createPermissionPolicy({ allow: ['bash(git status*)'], deny: ['bash(rm *)', 'write_file(.env)'] });
 * const agent = new Agent({ model, tools, approvalPolicy: (call, tool) => policy.decide(call, tool) });
 */
export function createPermissionPolicy(options: PermissionOptions = {}): PermissionPolicy {
  const mode = parsePermissionMode(options.mode ?? 'default');
  const defaults = { ...BASE_DEFAULTS };
  for (const [risk, decision] of Object.entries(options.defaults ?? {})) {
    if (!(risk in BASE_DEFAULTS))
      throw new ReinError(
        'config',
        'fatal',
        `unknown risk ${JSON.stringify(risk)} in permission defaults: use read, write, execute or unknown`,
      );
    if (decision === undefined) continue;
    if (!DECISIONS.includes(decision))
      throw new ReinError('config', 'fatal', `permission default for ${risk} is ${JSON.stringify(decision)}: use allow, ask or deny`);
    defaults[risk as ToolRisk | 'unknown'] = decision;
  }
  const entry = (effect: PermissionDecision, text: string, session: boolean): PolicyEntry => {
    const rule = parsePermissionRule(text);
    return { effect, rule, session, label: `${session ? 'session: ' : ''}${effect} ${rule.text}` };
  };
  const deny = (options.deny ?? []).map((t) => entry('deny', t, false));
  const ask = (options.ask ?? []).map((t) => entry('ask', t, false));
  const allow = (options.allow ?? []).map((t) => entry('allow', t, false));
  const buckets = new Map<string, Bucket>();

  const bucket = (name: string): Bucket => {
    let found = buckets.get(name);
    if (!found) {
      const mine = (list: PolicyEntry[]) => list.filter((e) => e.rule.matchesTool(name));
      const b = { deny: mine(deny), ask: mine(ask), allow: mine(allow) };
      found = {
        ...b,
        sessionAllow: b.allow.filter((e) => e.session),
        argumentRestricted: [...b.deny, ...b.ask].some((e) => e.rule.argument !== undefined),
      };
      buckets.set(name, found);
    }
    return found;
  };

  const byDefault = (tool: Tool, note: string | undefined): PermissionVerdict => {
    const risk = tool.risk ?? 'unknown';
    const suffix = note ? ` (${note})` : '';
    if (mode === 'acceptEdits' && risk === 'write') {
      return {
        decision: 'allow',
        rule: 'mode acceptEdits: risk write allows',
        reason: `acceptEdits mode allows tools that change files${suffix}`,
      };
    }
    const decision = defaults[risk];
    const rule = risk === 'unknown' ? `default: unknown risk ${VERB[decision]}` : `default: risk ${risk} ${VERB[decision]}`;
    const verb = decision === 'allow' ? 'are allowed' : decision === 'ask' ? "need a person's approval" : 'are refused';
    return { decision, rule, reason: `${DEFAULT_REASON[risk]} ${verb} unless a rule says otherwise${suffix}` };
  };

  const decide = (call: { name: string; arguments: Record<string, unknown> }, tool: Tool | undefined): PermissionVerdict => {
    if (tool === undefined) {
      return {
        decision: 'deny',
        rule: 'unknown tool',
        reason: `there is no tool named ${quote(call.name)}; call one of the tools you were given`,
      };
    }
    const b = bucket(call.name);
    const risk = tool.risk ?? 'unknown';
    const needsSubject = b.argumentRestricted || b.allow.some((e) => e.rule.argument !== undefined);
    const subject: CallSubject = needsSubject ? subjectOf(tool, call.arguments) : { kind: 'none', text: undefined };
    const about = subject.text === undefined ? '' : ` for ${quote(subject.text)}`;

    const denied = b.deny.find((e) => restricts(e, subject));
    if (denied)
      return {
        decision: 'deny',
        rule: denied.label,
        reason: `the rule "${denied.label}" refuses this call${about}; do it another way or ask the user`,
      };
    if (mode === 'plan' && risk !== 'read') {
      return {
        decision: 'deny',
        rule: 'mode plan: no side effects',
        reason: 'plan mode runs only read-only tools; describe the change you would make instead of making it',
      };
    }
    // A tool without `permissionSubject` never meets a rule with a pattern (documented); a
    // call whose subject could not be read (no path in the arguments, commands nested past
    // what is followed) might have met a deny rule, so a person decides.
    if (mode !== 'yolo') {
      // rein's and git's own files: a write there could change what the next run may do.
      const guarded = protectedOf(tool, call.arguments);
      if (guarded !== undefined) {
        return {
          decision: 'ask',
          rule: 'protected path',
          reason: `${guarded}: changing it needs a person's approval in every mode but yolo`,
        };
      }
    }
    const opaque = subject.kind === 'command' ? subject.analysis.opaque : undefined;
    if (opaque !== undefined && mode === 'yolo' && b.deny.length > 0) {
      // Fails closed: what cannot be read cannot be checked against the deny rules.
      const rule = b.deny[0] as PolicyEntry;
      return {
        decision: 'deny',
        rule: `opaque: ${rule.label}`,
        reason:
          `the command cannot be read as plain commands (${opaque}), so the rule "${rule.label}" cannot be checked against it; ` +
          'write it with literal command names (no expansions, eval, aliases, functions or code given to an interpreter inline), ' +
          'or run without yolo mode so that a person is asked',
      };
    }
    const unreadable = subject.kind === 'none' ? tool.permissionSubject !== undefined : opaque !== undefined;
    if (unreadable && b.argumentRestricted) {
      const rule = [...b.deny, ...b.ask].find((e) => e.rule.argument !== undefined) as PolicyEntry;
      return {
        decision: 'ask',
        rule: `unchecked: ${rule.label}`,
        reason: `the call's arguments could not be checked against the rule "${rule.label}", so a person must approve it`,
      };
    }
    if (mode === 'yolo')
      return { decision: 'allow', rule: 'mode yolo: allow all', reason: 'yolo mode allows every call that no deny rule refuses' };

    const asked = b.ask.filter((e) => restricts(e, subject));
    if (asked.length > 0) {
      const session = sessionOverride(b.sessionAllow, b.allow, asked, subject);
      if (session) return allowed(session, about);
      const first = asked[0] as PolicyEntry;
      return { decision: 'ask', rule: first.label, reason: `the rule "${first.label}" needs a person's approval${about}` };
    }
    const used = coverage(b.allow, subject);
    if (used) return allowed(used, about);
    return byDefault(tool, whyNotCovered(b.allow, subject));
  };

  const session = (effect: 'allow' | 'deny', text: string): void => {
    const e = entry(effect, text, true);
    (effect === 'allow' ? allow : deny).push(e);
    buckets.clear();
  };

  const snapshot = (): PermissionSnapshot => {
    const texts = (list: PolicyEntry[], inSession: boolean) => list.filter((e) => e.session === inSession).map((e) => e.rule.text);
    return {
      mode,
      allow: texts(allow, false),
      ask: texts(ask, false),
      deny: texts(deny, false),
      sessionAllow: texts(allow, true),
      sessionDeny: texts(deny, true),
      defaults: { ...defaults },
    };
  };

  return {
    mode,
    isYolo: mode === 'yolo',
    decide,
    allowForSession: (rule) => session('allow', rule),
    denyForSession: (rule) => session('deny', rule),
    describe: () => describePolicy(snapshot()),
    toJSON: snapshot,
  };
}

/** The tool's reason a call writes a protected file; a throwing check protects (fails closed). */
function protectedOf(tool: Tool, args: Record<string, unknown>): string | undefined {
  if (!tool.protectedTarget) return undefined;
  try {
    return tool.protectedTarget(args);
  } catch {
    return 'its target could not be checked against the protected paths';
  }
}

function allowed(used: PolicyEntry[], about: string): PermissionVerdict {
  const rule = used.map((e) => e.label).join(', ');
  return { decision: 'allow', rule, reason: `allowed${about} by the rule${used.length > 1 ? 's' : ''} "${rule}"` };
}

/**
 * Reads a mode name, forgiving case and separators (`accept-edits`, `ACCEPT_EDITS`).
 * Throws a `config` {@link ReinError} listing the modes.
 */
export function parsePermissionMode(text: string): PermissionMode {
  const key = String(text)
    .replace(/[-_\s]/g, '')
    .toLowerCase();
  const mode = PERMISSION_MODES.find((m) => m.toLowerCase() === key);
  if (!mode)
    throw new ReinError('config', 'fatal', `unknown permission mode ${JSON.stringify(text)}: use one of ${PERMISSION_MODES.join(', ')}`);
  return mode;
}

function describePolicy(s: PermissionSnapshot): string {
  const list = (label: string, rules: string[]) => (rules.length ? `${label}: ${rules.join(', ')}` : '');
  const rules = [list('deny', [...s.deny, ...s.sessionDeny]), list('ask', s.ask), list('allow', [...s.allow, ...s.sessionAllow])].filter(
    Boolean,
  );
  if (s.mode === 'yolo') {
    const denies = [...s.deny, ...s.sessionDeny];
    return `YOLO MODE: EVERY TOOL CALL RUNS WITHOUT ASKING. ${denies.length ? `Only the deny rules still refuse: ${denies.join(', ')}.` : 'No deny rule is set: nothing is refused.'}`;
  }
  const what: Record<Exclude<PermissionMode, 'yolo'>, string> = {
    default: `reads ${DOES[s.defaults.read]}, edits ${DOES[s.defaults.write]}, commands ${DOES[s.defaults.execute]}`,
    acceptEdits: `reads ${DOES[s.defaults.read]}, edits run, commands ${DOES[s.defaults.execute]}`,
    plan: 'only read-only tools run; everything else is refused',
  };
  return `permissions: mode ${s.mode} (${what[s.mode]})${rules.length ? `; ${rules.join('; ')}` : '; no rules'}`;
}
