/**
 * The roots rein announces to servers (`roots/list`): the workspace folder by default, as
 * `file://` URIs named after the folder.
 */
import { basename, isAbsolute, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ReinError } from '../errors.js';
import type { McpRoot } from './types.js';

/** Folders (relative ones against `cwd`) or `file://` URIs as MCP roots; throws `config` for another scheme. */
export function rootsOf(roots: readonly string[], cwd: string): McpRoot[] {
  return roots.map((root) => {
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(root)) {
      if (!root.startsWith('file://'))
        throw new ReinError('config', 'fatal', `MCP roots must be folders or file:// URIs; got ${JSON.stringify(root)}`);
      return { uri: root, name: basename(fileURLToPath(root)) || root };
    }
    const path = isAbsolute(root) ? root : resolve(cwd, root);
    return { uri: pathToFileURL(path).href, name: basename(path) || path };
  });
}
