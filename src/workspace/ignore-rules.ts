/**
 * `.gitignore` rules for walking the workspace, with git's semantics: each `.gitignore`
 * applies to paths below its own directory, deeper files override shallower ones (`!` can
 * re-include), and `.git/info/exclude` applies from the root. The matching itself is the
 * `ignore` package, loaded on first use so importing rein does not pay for it.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Ignore } from 'ignore';

/** The rules of one ignore file and the directory (relative to the root, `''` for the root) they belong to. */
export interface IgnoreRule {
  base: string;
  matcher: Ignore;
}

/** Rules in effect for a directory, shallowest first. */
export type IgnoreRules = readonly IgnoreRule[];

type IgnoreFactory = () => Ignore;
let factory: Promise<IgnoreFactory> | undefined;

function loadFactory(): Promise<IgnoreFactory> {
  factory ??= import('ignore').then((module) => module.default as unknown as IgnoreFactory);
  return factory;
}

/**
 * Whether `path` (relative to the root, forward slashes) is ignored under `rules`.
 * Directories are matched as `dir/`, so `build/` patterns apply to them only.
 */
export function isIgnored(rules: IgnoreRules, path: string, isDirectory: boolean): boolean {
  let ignored = false;
  for (const rule of rules) {
    if (rule.base !== '' && !path.startsWith(`${rule.base}/`)) continue;
    const below = rule.base === '' ? path : path.slice(rule.base.length + 1);
    const verdict = rule.matcher.test(isDirectory ? `${below}/` : below);
    if (verdict.ignored) ignored = true;
    else if (verdict.unignored) ignored = false;
  }
  return ignored;
}

/**
 * `rules` plus those of the ignore file(s) of one directory: its `.gitignore`, and for the
 * root also `.git/info/exclude`. A file that cannot be read adds nothing.
 */
export async function withDirectoryRules(rules: IgnoreRules, directory: string, base: string): Promise<IgnoreRules> {
  const files = [join(directory, '.gitignore')];
  if (base === '') files.unshift(join(directory, '.git', 'info', 'exclude'));
  let next = rules;
  for (const file of files) {
    const text = await readFile(file, 'utf8').catch(() => undefined);
    if (text === undefined || text.trim() === '') continue;
    const create = await loadFactory();
    next = [...next, { base, matcher: create().add(text) }];
  }
  return next;
}

/**
 * The rules in effect inside `start` from the ignore files of the root and every directory
 * down to (not including) `start`: none when `start` is the root, whose own files the walk
 * reads as it does every directory's.
 */
export async function ancestorRules(root: string, startRelative: string): Promise<IgnoreRules> {
  if (startRelative === '.' || startRelative === '') return [];
  let rules: IgnoreRules = await withDirectoryRules([], root, '');
  const parts = startRelative.split('/');
  for (let depth = 1; depth < parts.length; depth++) {
    const base = parts.slice(0, depth).join('/');
    rules = await withDirectoryRules(rules, join(root, ...parts.slice(0, depth)), base);
  }
  return rules;
}
