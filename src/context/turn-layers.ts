/**
 * The layers of one run, turn by turn: the static ones (system prompt, rules, skills)
 * resolved once, the per-turn ones (task, memory) and the hook applied on each request,
 * joined texts and their token counts recomputed only when a text changed.
 */
import type { Message, UserMessage } from '../model/types.js';
import { joinSystem, joinUser, type Layer } from './layers.js';
import type { ContextSetup, RetrievedText } from './options.js';
import { isSummaryMessage } from './summary.js';
import { clip, renderTask, userText, type TaskRecord } from './task.js';

/** What a turn's layers come to on the wire, with raw token counts. */
export interface JoinedLayers {
  /** The counter version the counts were made with. */
  version: number;
  layers: readonly Layer[];
  system: string | undefined;
  systemRaw: number;
  /** The context message, when there are user-role layers. */
  block: UserMessage | undefined;
  blockRaw: number;
}

/** What resolving a turn's layers needs from the run. */
export interface LayerTurn {
  step: number;
  signal: AbortSignal;
  history: readonly Message[];
  showTask: boolean;
  /** The task record, synced with the history. */
  task: () => Readonly<TaskRecord>;
}

/** The layers of one run. */
export class TurnLayers {
  joined: JoinedLayers;
  private statics: Promise<Layer[]> | undefined;
  /** Resolved, and nothing of them changes per turn. */
  private settledOnce = false;
  private memory: { query: string; text: string | undefined } | undefined;
  private lastUser: { scanned: number; text: string | undefined } = { scanned: 0, text: undefined };

  constructor(
    private readonly setup: ContextSetup,
    systemRaw: number,
  ) {
    this.joined = { version: setup.counter.version, layers: [], system: setup.system, systemRaw, block: undefined, blockRaw: 0 };
  }

  /** Whether this turn's layers are those of the last turn: no per-turn layer, the static ones resolved. */
  settled(showTask: boolean): boolean {
    const { setup } = this;
    if (showTask || setup.memory !== undefined || setup.layers !== undefined) return false;
    return this.settledOnce || (setup.rules === undefined && setup.skills === undefined);
  }

  /** This turn's layers: system prompt, rules, skills (resolved once per run), task, memory, then the hook. */
  async resolve(turn: LayerTurn): Promise<void> {
    const { setup } = this;
    const dynamic = turn.showTask || setup.memory !== undefined || setup.layers !== undefined;
    if (!dynamic && setup.rules === undefined && setup.skills === undefined) return; // the system prompt alone: nothing changes
    const layers = [...(await (this.statics ??= this.staticLayers()))];
    this.settledOnce = !dynamic;
    if (turn.showTask) layers.push({ id: 'task', role: 'user', text: renderTask(turn.task()) });
    if (setup.memory) {
      const text = await this.memoryText(turn);
      if (text !== undefined) layers.push({ id: 'memory', role: 'user', text });
    }
    const final = setup.layers
      ? await setup.layers(layers, { step: turn.step, history: turn.history, task: turn.task(), signal: turn.signal })
      : layers;
    this.apply(final);
  }

  /** Recounts the joined texts when the counter changed (its tokenizer loaded). */
  refresh(): void {
    const { counter } = this.setup;
    if (this.joined.version === counter.version) return;
    const { system, block } = this.joined;
    this.joined = {
      ...this.joined,
      version: counter.version,
      systemRaw: system === undefined ? 0 : counter.text(system),
      blockRaw: block === undefined ? 0 : counter.message(block),
    };
  }

  /** After a compaction: the history was rewritten, so the search for the latest user input starts over. */
  historyRewritten(): void {
    this.lastUser = { scanned: 0, text: undefined };
  }

  private async staticLayers(): Promise<Layer[]> {
    const { system, rules, skills } = this.setup;
    const layers: Layer[] = [];
    if (system !== undefined) layers.push({ id: 'system', role: 'system', text: system });
    const rulesText = typeof rules === 'function' ? await rules() : rules;
    if (rulesText) layers.push({ id: 'rules', role: 'system', text: rulesText });
    const skillsText = typeof skills === 'function' ? await skills() : skills;
    if (skillsText) layers.push({ id: 'skills', role: 'system', text: skillsText });
    return layers;
  }

  /** Recomputes the joined texts and their counts only when a layer's text changed. */
  private apply(layers: readonly Layer[]): void {
    const previous = this.joined;
    const counter = this.setup.counter;
    const sameSystem = sameTexts(previous.layers, layers, 'system') && previous.version === counter.version;
    const sameUser = sameTexts(previous.layers, layers, 'user') && previous.version === counter.version;
    if (sameSystem && sameUser) return;
    const system = sameSystem ? previous.system : joinSystem(layers);
    const blockText = sameUser ? undefined : joinUser(layers);
    const block = sameUser
      ? previous.block
      : blockText === undefined
        ? undefined
        : ({ role: 'user', content: blockText } satisfies UserMessage);
    this.joined = {
      version: counter.version,
      layers,
      system,
      systemRaw: sameSystem ? previous.systemRaw : system === undefined ? 0 : counter.text(system),
      block,
      blockRaw: sameUser ? previous.blockRaw : block === undefined ? 0 : counter.message(block),
    };
  }

  /** Memory hits for the latest user input, retrieved again only when that input changes. */
  private async memoryText(turn: LayerTurn): Promise<string | undefined> {
    const memory = this.setup.memory as NonNullable<ContextSetup['memory']>;
    const { history } = turn;
    const seen = this.lastUser;
    for (let i = Math.min(seen.scanned, history.length); i < history.length; i++) {
      const message = history[i] as Message;
      if (message.role === 'user' && !isSummaryMessage(message)) seen.text = userText(message);
    }
    seen.scanned = history.length;
    // Once compaction removed every user message, the goal is the question.
    const query = seen.text ?? turn.task().goal;
    if (this.memory?.query === query) return this.memory.text;
    const snippets = await memory.retrieve(query, memory.topK ?? 5, turn.signal);
    const relevant = snippets.filter(
      (s) => s.text.trim() !== '' && (memory.minScore === undefined || s.score === undefined || s.score >= memory.minScore),
    );
    const text = relevant.length === 0 ? undefined : memoryBlock(query, relevant, memory.maxChars ?? 4000);
    this.memory = { query, text };
    return text;
  }
}

/**
 * The memory layer: the snippets, best first, while the block stays within `maxChars` (it
 * goes into every request of the turn; the best snippet is always shown, cut if it must be).
 */
function memoryBlock(query: string, snippets: readonly RetrievedText[], maxChars: number): string {
  let text = ['## Relevant memory', `(Retrieved for "${clip(query.replace(/\s+/g, ' '), 80)}"; use what helps, ignore the rest.)`].join(
    '\n',
  );
  let shown = 0;
  for (const snippet of snippets) {
    const line = `- ${snippet.text.trim()}${snippet.source ? ` (${snippet.source})` : ''}`;
    if (text.length + 1 + line.length <= maxChars) text += `\n${line}`;
    else if (shown === 0) text += `\n${clip(line, Math.max(1, maxChars - text.length - 1))}`;
    else break;
    shown++;
  }
  return text;
}

/** Whether two layer lists have the same texts for `role`, in order. */
function sameTexts(a: readonly Layer[], b: readonly Layer[], role: Layer['role']): boolean {
  if (a === b) return true;
  let i = 0;
  let j = 0;
  for (;;) {
    while (i < a.length && (a[i] as Layer).role !== role) i++;
    while (j < b.length && (b[j] as Layer).role !== role) j++;
    if (i === a.length || j === b.length) return i === a.length && j === b.length;
    if ((a[i] as Layer).text !== (b[j] as Layer).text) return false;
    i++;
    j++;
  }
}
