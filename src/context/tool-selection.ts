/**
 * Dynamic tools. MCP servers bring dozens of tools; sending every schema on every turn
 * costs thousands of tokens and makes models pick worse. When more tools are registered
 * than `maxTools`, a run is sent a subset: `search_tools` (and `read_tool_output`), the
 * tools it is told to always send, the tools `search_tools` brought in, the active skills'
 * tools and the recently used ones, topped up with the first registered tools. Every tool
 * stays callable: the dispatcher looks calls up among all registered tools.
 *
 * The subset keeps registration order and is the same array from turn to turn until it
 * changes, so providers' prompt caches keep working.
 */
import { ReinError } from '../errors.js';
import type { RunEvent } from '../events.js';
import type { ToolSpec } from '../model/types.js';
import { defineTool } from '../tools/define.js';
import { READ_TOOL_OUTPUT } from '../tools/truncate.js';
import type { Tool } from '../tools/types.js';
import { stem } from '../skills/keywords.js';

/** The name of the search tool. */
export const SEARCH_TOOLS = 'search_tools';

/** Default of {@link ToolSelectorOptions.maxTools}. */
export const DEFAULT_MAX_TOOLS = 24;

/** What decides a run's subset besides the registered tools. */
export interface ToolSelectionState {
  /** Tools the active skills name. */
  activeSkillTools?: ReadonlySet<string>;
  /** Tools the run called, oldest first: the last is the most recent. */
  recentlyUsed: readonly string[];
  /** Tools `search_tools` brought in, in the order they were pinned: the last is the latest. */
  pinned: ReadonlySet<string>;
}

/** Options of {@link createToolSelector}. */
export interface ToolSelectorOptions {
  /** Send every tool while there are at most this many (default 24); else a subset of this size. */
  maxTools?: number;
  /** Tools always in the subset (e.g. the agent's own tools, as opposed to MCP ones). */
  always?: string[];
  /** Top the subset up with the first registered tools (default true); `false` sends only what was chosen. */
  fill?: boolean;
}

/** The selection state of one run, which `search_tools` and the loop update. */
export interface ToolSelectionRun extends ToolSelectionState {
  activeSkillTools?: Set<string>;
  recentlyUsed: string[];
  pinned: Set<string>;
  /** Records a call of `name` (the loop calls it on `tool_started`). */
  noteUsed(name: string): void;
  /** Sends these tools from the next turn on. */
  pin(names: Iterable<string>): void;
  /** This run's subset of `allSpecs`; the same array as last time while nothing changed. */
  select(allSpecs: ToolSpec[]): ToolSpec[];
  /** Rebuilds the state from a stored run's events (for a resume): calls made, tools pinned. */
  restore(events: Iterable<RunEvent>): void;
}

/** Chooses the tools sent each turn. One per agent; state is per run. */
export interface ToolSelector {
  readonly maxTools: number;
  /** The subset for `state`; `allSpecs` itself when it has at most `maxTools` tools. */
  select(allSpecs: ToolSpec[], state: ToolSelectionState): ToolSpec[];
  /** The tools matching `query`, best first (ties in registration order), `search_tools` left out. */
  search(allSpecs: readonly ToolSpec[], query: string, limit?: number): ToolSpec[];
  /** The selection state of a run, created on first use. */
  forRun(runId: string): ToolSelectionRun;
  /** Lets go of a run's state. */
  endRun(runId: string): void;
  /** The registered tools as last passed to `select` (what `search_tools` searches by default). */
  readonly registered: readonly ToolSpec[];
}

/** Runs whose state is kept when nobody calls `endRun`: the oldest go first. */
const MAX_RUNS = 1_000;
/** Names listed in `search_tools`' description when tools are left out. */
const MAX_LISTED_NAMES = 150;

/**
 * Creates a tool selector.
 *
 * @example
 * const selector = createToolSelector({ maxTools: 24, always: ownTools.map((t) => t.name) });
 * const searchTools = createSearchToolsTool(selector);
 * // per run: toolSpecs: () => selector.forRun(runId).select(registry.specs())
 * //          and selector.forRun(runId).noteUsed(name) on each tool_started
 */
export function createToolSelector(options: ToolSelectorOptions = {}): ToolSelector {
  const maxTools = options.maxTools ?? DEFAULT_MAX_TOOLS;
  if (!Number.isInteger(maxTools) || maxTools < 1) {
    throw new ReinError('config', 'fatal', `maxTools must be a whole number ≥ 1, got ${String(options.maxTools)}`);
  }
  const always = options.always ?? [];
  const fill = options.fill !== false;
  const runs = new Map<string, ToolSelectionRun>();
  const positions = new WeakMap<readonly ToolSpec[], Map<string, number>>();
  let registered: readonly ToolSpec[] = [];

  const positionsOf = (specs: readonly ToolSpec[]): Map<string, number> => {
    let map = positions.get(specs);
    if (!map) {
      map = new Map(specs.map((s, i) => [s.name, i]));
      positions.set(specs, map);
    }
    return map;
  };

  /** The chosen names, in registration order. */
  function choose(allSpecs: ToolSpec[], state: ToolSelectionState): string[] {
    const known = positionsOf(allSpecs);
    const chosen = new Set<string>();
    const add = (name: string): void => {
      if (chosen.size < maxTools && known.has(name)) chosen.add(name);
    };
    add(SEARCH_TOOLS);
    add(READ_TOOL_OUTPUT);
    for (const name of always) add(name);
    for (const name of [...state.pinned].reverse()) add(name);
    if (state.activeSkillTools) for (const name of state.activeSkillTools) add(name);
    for (let i = state.recentlyUsed.length - 1; i >= 0; i--) add(state.recentlyUsed[i] as string);
    if (fill) for (const spec of allSpecs) add(spec.name);
    return [...chosen].sort((a, b) => (known.get(a) as number) - (known.get(b) as number));
  }

  function build(allSpecs: ToolSpec[], names: string[]): ToolSpec[] {
    const included = new Set(names);
    const left = allSpecs.filter((s) => !included.has(s.name)).map((s) => s.name);
    return allSpecs.flatMap((spec) => {
      if (!included.has(spec.name)) return [];
      return spec.name === SEARCH_TOOLS ? [withHiddenNames(spec, left)] : [spec];
    });
  }

  const selector: ToolSelector = {
    maxTools,
    get registered() {
      return registered;
    },
    select(allSpecs, state) {
      registered = allSpecs;
      if (allSpecs.length <= maxTools) return allSpecs;
      return build(allSpecs, choose(allSpecs, state));
    },
    search(allSpecs, query, limit = 5) {
      return rankTools(allSpecs, query, limit);
    },
    forRun(runId) {
      const existing = runs.get(runId);
      if (existing) return existing;
      const run = createRunState(maxTools, (allSpecs, state) => {
        registered = allSpecs;
        if (allSpecs.length <= maxTools) return { specs: allSpecs };
        const names = choose(allSpecs, state);
        return { names, build: () => build(allSpecs, names) };
      });
      runs.set(runId, run);
      for (const [oldest] of runs) {
        if (runs.size <= MAX_RUNS) break;
        runs.delete(oldest);
      }
      return run;
    },
    endRun(runId) {
      runs.delete(runId);
    },
  };
  return selector;
}

type Choice = { specs: ToolSpec[] } | { names: string[]; build: () => ToolSpec[] };

function createRunState(maxTools: number, decide: (allSpecs: ToolSpec[], state: ToolSelectionState) => Choice): ToolSelectionRun {
  let last: { all: ToolSpec[]; key: string; out: ToolSpec[] } | undefined;
  // Enough history to fill a subset twice over; older calls no longer matter.
  const keepUsed = maxTools * 2;
  const run: ToolSelectionRun = {
    recentlyUsed: [],
    pinned: new Set(),
    noteUsed(name) {
      const used = run.recentlyUsed;
      if (used[used.length - 1] === name) return;
      const at = used.indexOf(name);
      if (at !== -1) used.splice(at, 1);
      used.push(name);
      if (used.length > keepUsed) used.splice(0, used.length - keepUsed);
    },
    pin(names) {
      for (const name of names) {
        run.pinned.delete(name); // re-pinning makes it the latest
        run.pinned.add(name);
      }
    },
    select(allSpecs) {
      const choice = decide(allSpecs, run);
      if ('specs' in choice) return choice.specs;
      const key = choice.names.join('\u0000');
      if (last && last.all === allSpecs && last.key === key) return last.out;
      last = { all: allSpecs, key, out: choice.build() };
      return last.out;
    },
    restore(events) {
      for (const event of events) {
        if (event.type === 'tool_started') run.noteUsed(event.name);
        if (event.type === 'tool_finished' && event.name === SEARCH_TOOLS) run.pin(pinnedIn(event.result.details));
      }
    },
  };
  return run;
}

/** `search_tools`' spec with the names of the tools not sent, so the model knows what to look for. */
function withHiddenNames(spec: ToolSpec, hidden: string[]): ToolSpec {
  if (hidden.length === 0) return spec;
  const listed = hidden.slice(0, MAX_LISTED_NAMES).join(', ');
  const more = hidden.length > MAX_LISTED_NAMES ? `, and ${hidden.length - MAX_LISTED_NAMES} more` : '';
  return { ...spec, description: `${spec.description}\n\nTools available but not shown (${hidden.length}): ${listed}${more}.` };
}

function pinnedIn(details: unknown): string[] {
  const pinned = (details as { pinned?: unknown } | undefined)?.pinned;
  return Array.isArray(pinned) ? pinned.filter((n): n is string => typeof n === 'string') : [];
}

/** Options of {@link createSearchToolsTool}. */
export interface SearchToolsOptions {
  /** All registered tools (default: what the selector last saw). */
  tools?: () => readonly ToolSpec[];
}

/**
 * The `search_tools` tool: ranks every registered tool by how well its name, description
 * and parameters match the query (BM25 over words; deterministic), pins the hits for the
 * calling run so they are sent from the next turn on, and lists them with a one-line
 * description. Hits can be called at once: every registered tool is callable.
 *
 * @example
 * const selector = createToolSelector({ maxTools: 24 });
 * const agent = new Agent({ model, tools: [...tools, createSearchToolsTool(selector)] });
 */
export function createSearchToolsTool(selector: ToolSelector, options: SearchToolsOptions = {}): Tool {
  return defineTool({
    name: SEARCH_TOOLS,
    description:
      'Find more tools. Not every available tool is shown to you: describe what you need in a few words ' +
      '(e.g. "create github issue", "query sql database") or give exact tool names; the best matches are added ' +
      'to your tools and can be called right away.',
    parameters: {
      type: 'object',
      properties: {
        query: { type: 'string', minLength: 1, description: 'What the tool should do, or tool names.' },
        limit: { type: 'integer', minimum: 1, maximum: 20, default: 5, description: 'How many tools to add at most.' },
      },
      required: ['query'],
      additionalProperties: false,
    },
    risk: 'read',
    effect: 'pure',
    execute: (args, ctx) => {
      const query = String(args.query);
      const limit = Number(args.limit ?? 5);
      const all = options.tools?.() ?? selector.registered;
      const hits = selector.search(all, query, limit);
      if (hits.length === 0) {
        const content = `No tool matches ${JSON.stringify(query)}. Try other words (what the tool acts on, what it does), or a name from this tool's description.`;
        return { content, details: { query, pinned: [] } };
      }
      const names = hits.map((h) => h.name);
      selector.forRun(ctx.runId).pin(names);
      const lines = hits.map((h) => `- ${h.name}: ${firstLine(h.description)}`);
      const content = `${hits.length} tool${hits.length === 1 ? '' : 's'} found for ${JSON.stringify(query)}; you can call ${hits.length === 1 ? 'it' : 'them'} now:\n${lines.join('\n')}`;
      return { content, details: { query, pinned: names } };
    },
  });
}

function firstLine(description: string): string {
  const line = description.trim().split('\n', 1)[0] ?? '';
  const sentence = /^(.+?[.!?])(\s|$)/.exec(line)?.[1] ?? line;
  return sentence.length > 160 ? `${sentence.slice(0, 159)}…` : sentence;
}

// --- ranking: BM25 over the words of each tool's name (weighted), description and parameters

const K1 = 1.2;
const B = 0.75;
const NAME_WEIGHT = 3;
const STOP_WORDS = new Set(
  'a an and are as at be by can do for from i in into is it me my of on or so that the this to use used uses using what when which with you your'.split(
    ' ',
  ),
);

interface RankIndex {
  docs: Array<{ tf: Map<string, number>; length: number }>;
  averageLength: number;
}

const rankIndexes = new WeakMap<readonly ToolSpec[], RankIndex>();

/** The tools matching `query`, best first, ties in registration order; `search_tools` never. */
function rankTools(specs: readonly ToolSpec[], query: string, limit: number): ToolSpec[] {
  const index = indexOf(specs);
  const exact = new Set(
    query
      .toLowerCase()
      .split(/[\s,]+/)
      .filter(Boolean),
  );
  const scores = specs.map((spec): number => (exact.has(spec.name.toLowerCase()) ? 1_000 : 0));
  for (const term of new Set(wordsOf(query))) {
    // A query word also matches the start of longer words ("repo" → "repository"), at half weight.
    const counts = index.docs.map(({ tf }) => {
      let count = tf.get(term) ?? 0;
      if (term.length >= 3) for (const [word, n] of tf) if (word !== term && word.startsWith(term)) count += n / 2;
      return count;
    });
    const withTerm = counts.filter((c) => c > 0).length;
    if (withTerm === 0) continue;
    const idf = Math.log(1 + (specs.length - withTerm + 0.5) / (withTerm + 0.5));
    counts.forEach((count, i) => {
      if (count === 0) return;
      const norm = K1 * (1 - B + (B * (index.docs[i] as { length: number }).length) / index.averageLength);
      scores[i] = (scores[i] as number) + (idf * count * (K1 + 1)) / (count + norm);
    });
  }
  return specs
    .map((spec, i) => ({ spec, i, score: scores[i] as number }))
    .filter((r) => r.score > 0 && r.spec.name !== SEARCH_TOOLS)
    .sort((a, b) => b.score - a.score || a.i - b.i)
    .slice(0, Math.max(0, limit))
    .map((r) => r.spec);
}

function indexOf(specs: readonly ToolSpec[]): RankIndex {
  const cached = rankIndexes.get(specs);
  if (cached) return cached;
  const docs = specs.map((spec) => {
    const tf = new Map<string, number>();
    const count = (text: string, weight: number): void => {
      for (const word of wordsOf(text)) tf.set(word, (tf.get(word) ?? 0) + weight);
    };
    count(spec.name, NAME_WEIGHT);
    count(spec.description, 1);
    const properties = spec.parameters.properties;
    if (properties && typeof properties === 'object') count(Object.keys(properties).join(' '), 1);
    let length = 0;
    for (const n of tf.values()) length += n;
    return { tf, length };
  });
  const averageLength = docs.reduce((sum, d) => sum + d.length, 0) / Math.max(1, docs.length) || 1;
  const index = { docs, averageLength };
  rankIndexes.set(specs, index);
  return index;
}

/** Lower-case word stems; a camel-cased word also yields its parts: `listGitHubIssues` → listgithubissu, list, git, hub, issu. */
function wordsOf(text: string): string[] {
  const words: string[] = [];
  for (const raw of text.split(/[^a-zA-Z0-9]+/)) {
    const parts = raw.replace(/([a-z0-9])([A-Z])/g, '$1 $2').split(' ');
    for (const word of parts.length > 1 ? [raw, ...parts] : parts) {
      const lower = word.toLowerCase();
      if (lower.length > 1 && !STOP_WORDS.has(lower)) words.push(stem(lower));
    }
  }
  return words;
}
