/**
 * The optional capabilities an agent adds around its runs: skills (explicit `/skill:name`,
 * matched, or loaded by the model; `allowed-tools` narrowing), memory (tools and hits in
 * each request), paging of cut tool results, and dynamic tool selection. Each contributes
 * tools and context once per agent, and per run a little state; an agent with none of them
 * pays nothing per turn.
 */
import type { ContextOptions, RetrievedText } from '../context/options.js';
import { createToolOutputTool, ToolOutputArchive } from '../context/tool-output.js';
import { createSearchToolsTool, createToolSelector, type ToolSelectionRun, type ToolSelector } from '../context/tool-selection.js';
import type { RunEvent } from '../events.js';
import type { MemoryStore } from '../memory/types.js';
import { createMemoryTools } from '../memory/tools.js';
import type { Message, ToolCall, ToolSpec, UserMessage } from '../model/types.js';
import { skillsCatalog, skillNamesIn } from '../skills/render.js';
import { SkillSession } from '../skills/session.js';
import { createSkillTools } from '../skills/tools.js';
import type { Skill } from '../skills/types.js';
import type { RunStore } from '../store/types.js';
import type { Tool } from '../tools/types.js';

/** What an agent was configured with, for the extras. */
export interface ExtrasConfig {
  skills?: Skill[] | { skills: Skill[]; match?: boolean };
  memory?: MemoryStore;
  toolOutputPaging?: boolean | { maxPageChars?: number; archiveChars?: number };
  toolSelection?: { maxTools?: number; always?: string[]; fill?: boolean };
  /** The agent's own tools' names: never hidden by tool selection. */
  ownTools: string[];
  store?: RunStore;
}

/** One run's share of the extras. */
export interface RunExtras {
  /** The user input of a new run, with the instructions of skills it activates. */
  input(user: UserMessage): UserMessage;
  /** A resumed run: which skills were active, which tools were pinned. */
  restore(history: readonly Message[], events?: readonly RunEvent[]): void;
  /** The tools offered this turn, narrowed by active skills and selection. */
  specs(all: ToolSpec[]): ToolSpec[];
  /** Why a call may not run now (an active skill's `allowed-tools`), or undefined. */
  refuse(call: ToolCall): string | undefined;
  onEvent(event: RunEvent): void;
  end(): void;
}

/** The extras of one agent. */
export class AgentExtras {
  /** Tools the extras add to the agent's own. */
  readonly tools: Tool[] = [];
  private readonly skills: Skill[];
  private readonly match: boolean;
  private readonly sessions = new Map<string, SkillSession>();
  private readonly archive: ToolOutputArchive | undefined;
  private readonly selector: ToolSelector | undefined;

  constructor(config: ExtrasConfig) {
    const skillOption = config.skills;
    this.skills = Array.isArray(skillOption) ? skillOption : (skillOption?.skills ?? []);
    this.match = Array.isArray(skillOption) || skillOption?.match !== false;
    if (this.skills.length > 0) {
      // A run's tools find its session by run id; outside a run (a direct call) a fresh one.
      this.tools.push(...createSkillTools(this.skills, (runId) => this.sessions.get(runId) ?? new SkillSession(this.skills)));
    }
    if (config.memory) this.tools.push(...createMemoryTools(config.memory));
    if (config.toolOutputPaging) {
      const paging = typeof config.toolOutputPaging === 'object' ? config.toolOutputPaging : {};
      const archive = new ToolOutputArchive({
        ...(config.store ? { store: config.store } : {}),
        ...(paging.archiveChars ? { maxChars: paging.archiveChars } : {}),
      });
      this.archive = archive;
      this.tools.push(
        createToolOutputTool(
          (id, { runId }) => archive.lookup(runId, id),
          paging.maxPageChars ? { maxPageChars: paging.maxPageChars } : {},
        ),
      );
    }
    if (config.toolSelection) {
      this.selector = createToolSelector({
        ...config.toolSelection,
        always: [...config.ownTools, ...this.tools.map((t) => t.name), ...(config.toolSelection.always ?? [])],
      });
      this.tools.push(createSearchToolsTool(this.selector));
    }
  }

  /** The context layers the extras fill (the skills catalog, memory hits), unless the user set them. */
  contextOptions(memory: MemoryStore | undefined, given: ContextOptions): ContextOptions {
    const catalog = this.catalog();
    return {
      ...given,
      ...(catalog && given.skills === undefined ? { skills: catalog } : {}),
      ...(memory && given.memory === undefined
        ? { memory: { retrieve: (query: string, k: number, signal: AbortSignal) => retrieveForContext(memory, query, k, signal) } }
        : {}),
    };
  }

  /** The skills catalog, for an agent without a context engine (it goes after the system prompt). */
  catalog(): string {
    return this.skills.length > 0 ? skillsCatalog(this.skills) : '';
  }

  /** Whether runs need per-run state at all. */
  get active(): boolean {
    return this.skills.length > 0 || this.archive !== undefined || this.selector !== undefined;
  }

  startRun(runId: string): RunExtras {
    const session = this.skills.length > 0 ? new SkillSession(this.skills) : undefined;
    if (session) this.sessions.set(runId, session);
    const selection: ToolSelectionRun | undefined = this.selector?.forRun(runId);
    const { archive, match } = this;
    return {
      input: (user) => {
        if (!session) return user;
        const prepare = (input: string): string => {
          const prepared = session.prepareInput(input, { match });
          return prepared.injection ? `${prepared.injection}\n\n${prepared.text}` : prepared.text;
        };
        if (typeof user.content === 'string') {
          const text = prepare(user.content);
          return text === user.content ? user : { ...user, content: text };
        }
        // Content with attachments (an image, an MCP resource): the first text part is the input.
        const first = user.content.findIndex((part) => part.type === 'text');
        const part = user.content[first];
        if (!part || part.type !== 'text') return user;
        const text = prepare(part.text);
        if (text === part.text) return user;
        const content = [...user.content];
        content[first] = { type: 'text', text };
        return { ...user, content };
      },
      restore: (history, events) => {
        session?.restore(skillNamesIn(history));
        if (events) selection?.restore(events as RunEvent[]);
        if (archive) archive.recordMessages(runId, history as Message[]);
      },
      specs: (all) => {
        const narrowed = session ? session.filterTools(all) : all;
        if (!selection) return narrowed;
        if (session) selection.activeSkillTools = session.allowedTools();
        return selection.select(narrowed);
      },
      refuse: (call) => {
        if (!session) return undefined;
        const check = session.checkTool(call.name);
        return check.allowed ? undefined : check.reason;
      },
      onEvent: (event) => {
        if (event.type === 'tool_finished') archive?.recordEvent(event);
        else if (event.type === 'tool_started') selection?.noteUsed(event.name);
      },
      end: () => {
        this.sessions.delete(runId);
        this.selector?.endRun(runId);
        archive?.forget(runId);
      },
    };
  }
}

/** Memory hits for the context layer, each naming its id so the model can `forget` it. */
async function retrieveForContext(memory: MemoryStore, query: string, k: number, signal: AbortSignal): Promise<RetrievedText[]> {
  const hits = await memory.retrieve(query, k, { signal });
  return hits.map((hit) => ({
    text: hit.text,
    source: hit.source ? `memory ${hit.id}, from ${hit.source}` : `memory ${hit.id}`,
    ...(hit.score === undefined ? {} : { score: hit.score }),
  }));
}
