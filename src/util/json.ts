/** The shape test every room uses on untyped JSON (configuration, tool arguments, wire bodies). */

/** A JSON object. */
export type Json = Record<string, unknown>;

/** True for a JSON object (not null, not an array). */
export function isRecord(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
