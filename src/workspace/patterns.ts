/**
 * Glob patterns from the model, with picomatch (loaded on first use; permission rules load
 * it through here too). Patterns are
 * relative to a base directory; `..` segments and absolute patterns that leave the base
 * are refused, since a glob must not become a way out of the workspace.
 */
import { createRequire } from 'node:module';
import { isAbsolute } from 'node:path';
import { ReinError } from '../errors.js';

type Picomatch = typeof import('picomatch');
let loaded: Picomatch | undefined;

/**
 * picomatch, required on first use rather than when rein is imported. Synchronous, because
 * permission rules match tool names inside a synchronous policy check.
 */
export function loadPicomatch(): Picomatch {
  return (loaded ??= createRequire(import.meta.url)('picomatch') as Picomatch);
}

/**
 * The pattern relative to `baseAbsolute`, forward slashes, without a leading `./`; an
 * absolute pattern below the base is made relative. Throws `path_refused` otherwise.
 */
export function normalizePattern(pattern: string, baseAbsolute: string): string {
  let normalized = pattern.trim().replace(/\\(?=[/])/g, '/');
  if (normalized === '') throw new ReinError('invalid_arguments', 'correctable', 'the pattern is empty: give a glob such as "**/*.ts"');
  if (isAbsolute(normalized)) {
    const prefix = baseAbsolute.endsWith('/') ? baseAbsolute : `${baseAbsolute}/`;
    if (!normalized.startsWith(prefix)) throw refused(pattern, `it is an absolute path outside the searched directory ${baseAbsolute}`);
    normalized = normalized.slice(prefix.length);
  }
  while (normalized.startsWith('./')) normalized = normalized.slice(2);
  if (normalized.split('/').includes('..')) throw refused(pattern, '".." segments are not allowed in patterns; set `path` instead');
  return normalized;
}

function refused(pattern: string, why: string): ReinError {
  return new ReinError(
    'path_refused',
    'correctable',
    `pattern ${JSON.stringify(pattern)} is refused: ${why}. Patterns are relative to \`path\` (default: the workspace root).`,
  );
}
