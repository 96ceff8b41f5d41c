/** `rein models [filter]`: the offline model catalog as a table, or as JSON with --json. */
import { parseArgs } from 'node:util';
import { PRICES_AS_OF } from '../../model/catalog-data.js';
import { listModels, lookupModel } from '../../model/catalog.js';
import type { ModelInfo } from '../../model/catalog.js';
import { EXIT, type Command } from '../io.js';

const usage = `rein models [--json] [filter]

Lists the models rein knows offline: context window, maximum output tokens, whether the
model reasons, and list prices in USD per million tokens (input, output, cache read,
cache write). The filter keeps rows whose provider/model contains it ("anthropic",
"sonnet", "gpt-5"). Dated ids (claude-sonnet-4-5-20250929) use their family's row;
openai-responses/<model> uses openai's, openrouter/<vendor>/<model> the vendor's: such a
whole provider/model as the filter shows that model as rein prices it.
Models not listed get a 128k window, 8,192 output tokens and no price.

Options:
      --json    print the rows as one JSON array
  -h, --help    show this help`;

/** The rows of `models` whose `provider/id` contains `filter` (case-insensitive). */
export function filterModels(models: ModelInfo[], filter: string | undefined): ModelInfo[] {
  if (filter === undefined || filter.trim() === '') return models;
  const needle = filter.trim().toLowerCase();
  return models.filter((m) => `${m.provider}/${m.id}`.toLowerCase().includes(needle));
}

/**
 * The rows for a filter: those whose `provider/id` contains it, else — for a whole
 * `provider/model` the catalog knows under another row (`openai-responses/gpt-5`,
 * `openrouter/anthropic/claude-sonnet-4.5`, a dated id) — that model as rein prices it.
 */
function modelsFor(filter: string | undefined): ModelInfo[] {
  const rows = filterModels(listModels(), filter);
  const slash = filter?.indexOf('/') ?? -1;
  if (rows.length > 0 || filter === undefined || slash <= 0 || slash === filter.length - 1) return rows;
  const info = lookupModel(filter.slice(0, slash).trim(), filter.slice(slash + 1).trim());
  return info.catalogId === undefined ? rows : [info];
}

/** The human table: one row per model, right-aligned numbers, and where the prices come from. */
export function formatModelTable(models: ModelInfo[]): string {
  const header = ['MODEL', 'CONTEXT', 'MAX OUT', 'REASONING', 'IN $/M', 'OUT $/M', 'CACHE R $/M', 'CACHE W $/M'];
  const rows = models.map((m) => [
    `${m.provider}/${m.id}`,
    tokens(m.contextWindow),
    tokens(m.maxOutputTokens),
    m.reasoning ? 'yes' : 'no',
    price(m.pricing?.input),
    price(m.pricing?.output),
    price(m.pricing?.cacheRead),
    price(m.pricing?.cacheWrite),
  ]);
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)));
  // The model column reads left to right; the numbers line up on the right.
  const line = (cells: string[]): string =>
    cells
      .map((cell, column) => (column === 0 ? cell.padEnd(widths[column] ?? 0) : cell.padStart(widths[column] ?? 0)))
      .join('  ')
      .trimEnd();
  const notes = models.filter((m) => m.note !== undefined).map((m) => `  ${m.provider}/${m.id}: ${m.note}`);
  return [
    line(header),
    ...rows.map(line),
    '',
    `List prices as of ${PRICES_AS_OF}, USD per million tokens; they change (check the provider's pricing page).`,
    ...(notes.length > 0 ? ['Notes:', ...notes] : []),
    '',
  ].join('\n');
}

function tokens(n: number): string {
  return n.toLocaleString('en-US');
}

function price(usd: number | undefined): string {
  if (usd === undefined) return '?';
  // Two decimals like a price list, more only when the price needs them ($0.075, $0.005).
  const text = String(Number(usd.toFixed(4)));
  const decimals = text.split('.')[1]?.length ?? 0;
  return decimals >= 2 ? text : usd.toFixed(2);
}

export const command: Command = {
  description: 'list known models: context, output limit, reasoning, prices',
  usage,
  async run(argv, io) {
    let parsed: ReturnType<typeof parse>;
    try {
      parsed = parse(argv);
    } catch (error) {
      io.stderr.write(`rein models: ${error instanceof Error ? error.message : String(error)}\n${usage}\n`);
      return EXIT.usage;
    }
    if (parsed.values.help) {
      io.stdout.write(`${usage}\n`);
      return EXIT.ok;
    }
    if (parsed.positionals.length > 1) {
      io.stderr.write(`rein models: one filter at most, got ${parsed.positionals.length} (${parsed.positionals.join(' ')})\n`);
      return EXIT.usage;
    }
    const models = modelsFor(parsed.positionals[0]);
    if (parsed.values.json) {
      io.stdout.write(`${JSON.stringify(models, null, 2)}\n`);
      return EXIT.ok;
    }
    if (models.length === 0) {
      io.stderr.write(`rein models: no known model matches "${parsed.positionals[0] ?? ''}"\n`);
      return EXIT.failed;
    }
    io.stdout.write(formatModelTable(models));
    return EXIT.ok;
  },
};

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: { json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
  });
}
