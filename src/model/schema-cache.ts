/**
 * A cache of what is derived from a JSON Schema (a compiled validator, a provider's
 * conversion), keyed by the schema's content: a tool defined anew for every agent or request
 * carries a fresh copy of the same schema, and deriving again costs time and, for compiled
 * code, memory V8 keeps. Bounded: the least recently used content goes first. A value still
 * in use stays reachable from the schema objects it was asked for (identity first: the
 * per-call look-up costs one WeakMap get).
 */

/** A canonical JSON form (keys sorted at every level, `undefined` and functions dropped): equal content, equal key. */
export function schemaKey(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += (i > 0 ? ',' : '') + schemaKey(value[i]);
    return `${out}]`;
  }
  const record = value as Record<string, unknown>;
  let out = '{';
  let first = true;
  for (const key of Object.keys(record).sort()) {
    const item = record[key];
    if (item === undefined || typeof item === 'function') continue;
    out += `${first ? '' : ','}${JSON.stringify(key)}:${schemaKey(item)}`;
    first = false;
  }
  return `${out}}`;
}

/** Values derived from schemas, shared by every schema object of the same content. */
export class SchemaCache<V> {
  private readonly byContent = new Map<string, V>();
  private readonly bySchema = new WeakMap<object, V>();

  constructor(private readonly max: number) {}

  /** The value for this schema's content, if derived already. */
  peek(schema: object): V | undefined {
    const known = this.bySchema.get(schema);
    if (known !== undefined) return known;
    const key = schemaKey(schema);
    const value = this.byContent.get(key);
    if (value !== undefined) this.touch(schema, key, value);
    return value;
  }

  /** The value for this schema's content, derived by `make` (once per content while cached). */
  get(schema: object, make: () => V): V {
    const known = this.bySchema.get(schema);
    if (known !== undefined) return known;
    const key = schemaKey(schema);
    const value = this.byContent.get(key) ?? make();
    this.touch(schema, key, value);
    return value;
  }

  /** How many contents are cached. */
  get size(): number {
    return this.byContent.size;
  }

  private touch(schema: object, key: string, value: V): void {
    // Map iterates in insertion order: re-inserting makes the first key the least recently used.
    this.byContent.delete(key);
    this.byContent.set(key, value);
    if (this.byContent.size > this.max) this.byContent.delete(this.byContent.keys().next().value as string);
    this.bySchema.set(schema, value);
  }
}
