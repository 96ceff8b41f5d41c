// docs/events.md is the event reference: it must list every event type of src/events.ts
// with every field, written with the field's type as the source declares it, and every
// field of the types the events carry. Read from the source with the TypeScript compiler,
// so a new event type or field (or a changed type) fails here until the page says it.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { DELTA_EVENT_TYPES } from '../../src/events.js';
import { sectionUnder, tableUnder } from './markdown.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const doc = readFileSync(`${root}docs/events.md`, 'utf8');

interface Field {
  name: string;
  optional: boolean;
  type: string;
}

const normalize = (text: string): string =>
  text
    .replace(/\s+/g, ' ')
    .replace(/\s*;\s*}/g, ' }')
    .trim();

function sourceOf(path: string): ts.SourceFile {
  return ts.createSourceFile(path, readFileSync(`${root}${path}`, 'utf8'), ts.ScriptTarget.Latest, true);
}

function fieldsOf(members: ts.NodeArray<ts.TypeElement>, source: ts.SourceFile): Field[] {
  return members.filter(ts.isPropertySignature).map((p) => ({
    name: p.name.getText(source),
    optional: p.questionToken !== undefined,
    type: normalize(p.type?.getText(source) ?? 'unknown'),
  }));
}

/** The members of a type alias or interface called `name` in `path`. */
function declaration(path: string, name: string): { source: ts.SourceFile; node: ts.TypeAliasDeclaration | ts.InterfaceDeclaration } {
  const source = sourceOf(path);
  const node = source.statements.find(
    (s): s is ts.TypeAliasDeclaration | ts.InterfaceDeclaration =>
      (ts.isTypeAliasDeclaration(s) || ts.isInterfaceDeclaration(s)) && s.name.text === name,
  );
  if (!node) throw new Error(`${path} declares no ${name}`);
  return { source, node };
}

function interfaceFields(path: string, name: string): Field[] {
  const { source, node } = declaration(path, name);
  if (!ts.isInterfaceDeclaration(node)) throw new Error(`${name} is not an interface`);
  return fieldsOf(node.members, source);
}

/** The string literals of a union alias (`type A = 'x' | 'y'`). */
function literalsOf(path: string, name: string): string[] {
  const { node } = declaration(path, name);
  if (!ts.isTypeAliasDeclaration(node) || !ts.isUnionTypeNode(node.type)) throw new Error(`${name} is not a union`);
  return node.type.types.map((t) => (ts.isLiteralTypeNode(t) && ts.isStringLiteral(t.literal) ? t.literal.text : t.getText()));
}

/** Each event of `RunEventBody`: its `type` and its fields (`type` included). */
function eventsInSource(): Array<{ type: string; fields: Field[] }> {
  const { source, node } = declaration('src/events.ts', 'RunEventBody');
  if (!ts.isTypeAliasDeclaration(node) || !ts.isUnionTypeNode(node.type)) throw new Error('RunEventBody is not a union');
  return node.type.types.map((member) => {
    if (!ts.isTypeLiteralNode(member)) throw new Error(`a member of RunEventBody is not an object type: ${member.getText(source)}`);
    const fields = fieldsOf(member.members, source);
    const type = fields.find((f) => f.name === 'type')?.type.replace(/^'|'$/g, '');
    if (!type) throw new Error(`a member of RunEventBody has no type: ${member.getText(source)}`);
    return { type, fields };
  });
}

/** What a field's type cell in the docs must read: the source's type in backticks, `(optional)` after an optional one. */
const cellOf = (field: Field): string => `\`${field.type}\`${field.optional ? ' (optional)' : ''}`;

/** The documented fields under `heading`: name → type cell. */
function documented(heading: string): Map<string, string> {
  const rows = tableUnder(doc, heading);
  if (!rows) throw new Error(`docs/events.md has no heading "${heading}"`);
  return new Map(rows.map((cells) => [(cells[0] ?? '').replace(/^`|`$/g, ''), normalize(cells[1] ?? '')]));
}

/** Differences between the source's fields and the doc's table, as readable lines. */
function mismatches(heading: string, fields: Field[]): string[] {
  const table = documented(heading);
  const problems: string[] = [];
  for (const field of fields) {
    const cell = table.get(field.name);
    if (cell === undefined) problems.push(`${heading}: field ${field.name} is not documented (${cellOf(field)})`);
    else if (cell !== cellOf(field))
      problems.push(`${heading}: field ${field.name} is documented as ${cell}, the source says ${cellOf(field)}`);
  }
  for (const name of table.keys())
    if (!fields.some((f) => f.name === name)) problems.push(`${heading}: documents ${name}, which the source does not have`);
  return problems;
}

describe('docs/events.md', () => {
  const events = eventsInSource();

  it('reads the event union from the source', () => {
    expect(events.length).toBeGreaterThanOrEqual(18);
    expect(events.map((e) => e.type)).toContain('run_finished');
  });

  it('lists every event type once, in a table that says which are stored', () => {
    const rows = tableUnder(doc, 'The event types') ?? [];
    const listed = rows.map((cells) => (/`([a-z_]+)`/.exec(cells[0] ?? '')?.[1] ?? cells[0]) as string);
    expect([...listed].sort()).toEqual(events.map((e) => e.type).sort());
    for (const cells of rows) {
      const type = /`([a-z_]+)`/.exec(cells[0] ?? '')?.[1] as Parameters<typeof DELTA_EVENT_TYPES.has>[0];
      expect(cells[1], `stored column of ${type}`).toBe(DELTA_EVENT_TYPES.has(type) ? 'no' : 'yes');
    }
  });

  it('documents every field of every event, with its type as declared', () => {
    const problems = events.flatMap((event) => mismatches(`\`${event.type}\``, event.fields));
    expect(problems).toEqual([]);
  });

  it('documents the fields every event carries and the types events hold', () => {
    const problems = [
      ...mismatches('Fields every event carries', interfaceFields('src/events.ts', 'EventBase')),
      ...(['RunLimits', 'RunTotals', 'RunResult'] as const).flatMap((name) =>
        mismatches(`\`${name}\``, interfaceFields('src/events.ts', name)),
      ),
      ...mismatches('`ErrorInfo`', interfaceFields('src/errors.ts', 'ErrorInfo')),
      ...(['Usage', 'Cost', 'UserMessage', 'AssistantMessage', 'ToolResultMessage'] as const).flatMap((name) =>
        mismatches(`\`${name}\``, interfaceFields('src/model/types.ts', name)),
      ),
    ];
    expect(problems).toEqual([]);
  });

  it('documents every field of the content parts', () => {
    const rows = new Map((tableUnder(doc, 'Content parts') ?? []).map((cells) => [(cells[0] ?? '').replace(/^`|`$/g, ''), cells[1] ?? '']));
    const problems: string[] = [];
    for (const name of ['TextContent', 'ImageContent', 'ThinkingContent', 'ToolCall']) {
      const row = rows.get(name);
      if (row === undefined) {
        problems.push(`${name} is not in the parts table`);
        continue;
      }
      for (const field of interfaceFields('src/model/types.ts', name)) {
        const written = `\`${field.name}${field.optional ? '?' : ''}: ${field.type}\``;
        if (!row.includes(written)) problems.push(`${name}: ${written} is not in its row`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('names every loop state, run status and stop reason', () => {
    const problems: string[] = [];
    for (const name of ['LoopState', 'RunStatus', 'StopReasonCode']) {
      const section = sectionUnder(doc, `\`${name}\``) ?? '';
      for (const literal of literalsOf('src/events.ts', name)) {
        if (!section.includes(`'${literal}'`) && !section.includes(`\`${literal}\``)) problems.push(`${name}: ${literal} is not named`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('fails on a field the page does not have, so it cannot pass by accident', () => {
    expect(
      mismatches('`run_resumed`', [
        ...(events.find((e) => e.type === 'run_resumed')?.fields ?? []),
        { name: 'newField', optional: false, type: 'string' },
      ]),
    ).toEqual(['`run_resumed`: field newField is not documented (`string`)']);
    expect(mismatches('`run_resumed`', [{ name: 'epoch', optional: true, type: 'number' }])).toContain(
      '`run_resumed`: field epoch is documented as `number`, the source says `number` (optional)',
    );
  });
});
