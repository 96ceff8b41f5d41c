/**
 * Project rules: the `AGENTS.md` files (and `CLAUDE.md`, which many projects already have)
 * from the repository root down to the working directory, read into one text for the
 * system layer. Outermost first, so the rules nearest the work come last and win; the
 * user's own `~/.rein/AGENTS.md` comes before all of them.
 */
import { createHash } from 'node:crypto';
import { lstat, readFile, realpath } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, relative, resolve, sep } from 'node:path';
import { projectDirs } from '../util/repo-root.js';

/**
 * The file names read in each directory, in this order. `AGENTS.md` comes first so that a
 * `CLAUDE.md` linking to it (the usual way to serve both) is the one left out.
 */
export const RULES_FILE_NAMES: readonly string[] = ['AGENTS.md', 'CLAUDE.md'];

/** Default of {@link LoadProjectRulesOptions.maxFileChars}. */
export const DEFAULT_MAX_RULES_FILE_CHARS = 32_000;

/** Options of {@link loadProjectRules}. */
export interface LoadProjectRulesOptions {
  /** The working directory: rules are read from the repository root down to it. */
  cwd: string;
  /**
   * Whose `~/.rein/AGENTS.md` to read first as user rules (default: the current user's home
   * directory); `false` reads none.
   */
  home?: string | false;
  /** A file longer than this many characters is cut, with a note (default 32 000). */
  maxFileChars?: number;
}

/** A rules file that could not be used as it is, and why. */
export interface RulesDiagnostic {
  file: string;
  reason: string;
}

/** What {@link loadProjectRules} found. */
export interface ProjectRules {
  /** The rules for the system layer: each file under a header naming it; `''` when there are none. */
  text: string;
  /** The absolute paths of the files whose text is included, in order. */
  files: string[];
  diagnostics: RulesDiagnostic[];
}

interface Candidate {
  path: string;
  /** How the header names it: relative to the repository root, or `~/.rein/AGENTS.md`. */
  label: string;
}

/**
 * Reads the project rules for `cwd`. The repository root is the nearest ancestor of `cwd`
 * (itself included) holding a `.git` directory or file; without one only `cwd` is read. In
 * each directory from the root down to `cwd`, `AGENTS.md` then `CLAUDE.md`. A file read
 * twice (a symbolic link, or the same text in two places) is included once; a file that
 * cannot be read is a diagnostic and the others still load. Never throws.
 *
 * @example
 * const rules = await loadProjectRules({ cwd: process.cwd() });
 * const system = [basePrompt, rules.text].filter(Boolean).join('\n\n');
 * for (const d of rules.diagnostics) console.warn(`${d.file}: ${d.reason}`);
 */
export async function loadProjectRules(options: LoadProjectRulesOptions): Promise<ProjectRules> {
  const cwd = resolve(options.cwd);
  const maxChars = options.maxFileChars ?? DEFAULT_MAX_RULES_FILE_CHARS;
  // From the repository root (or `cwd` outside one) down to `cwd`.
  const dirs = projectDirs(cwd).reverse();
  const top = dirs[0] as string;
  const candidates: Candidate[] = [];
  const home = options.home === undefined ? homedir() : options.home;
  if (home !== false) candidates.push({ path: join(resolve(home), '.rein', 'AGENTS.md'), label: '~/.rein/AGENTS.md' });
  for (const dir of dirs) {
    for (const name of RULES_FILE_NAMES) {
      const path = join(dir, name);
      candidates.push({ path, label: relative(top, path).split(sep).join('/') });
    }
  }

  // Reading is independent per file; the order is restored when assembling.
  const reads = await Promise.all(candidates.map((c) => readRulesFile(c.path)));
  const diagnostics: RulesDiagnostic[] = [];
  const files: string[] = [];
  const sections: string[] = [];
  const seenPaths = new Set<string>();
  const seenTexts = new Set<string>();
  reads.forEach((read, i) => {
    const candidate = candidates[i] as Candidate;
    if (read.kind === 'missing') return;
    if (read.kind === 'failed') {
      diagnostics.push({ file: candidate.path, reason: read.reason });
      return;
    }
    let text = read.text.replace(/^\uFEFF/, '').trim();
    const digest = createHash('sha256').update(text).digest('hex');
    if (text === '' || seenPaths.has(read.realPath) || seenTexts.has(digest)) return;
    seenPaths.add(read.realPath);
    seenTexts.add(digest);
    if (text.length > maxChars) {
      const note = `[cut: only the first ${maxChars.toLocaleString('en-US')} of ${text.length.toLocaleString('en-US')} characters of this file are included]`;
      diagnostics.push({
        file: candidate.path,
        reason: `longer than ${maxChars} characters: only its first ${maxChars} are included; shorten it or split it into nested AGENTS.md files`,
      });
      text = `${text.slice(0, maxChars)}\n${note}`;
    }
    files.push(candidate.path);
    sections.push(`## ${candidate.label}\n\n${text}`);
  });

  if (sections.length === 0) return { text: '', files, diagnostics };
  const preface =
    '# Project rules\n\nInstructions from the rules files of this project (AGENTS.md). Files further down are closer to the ' +
    'working directory: where they disagree with earlier ones, follow the later ones.';
  return { text: `${preface}\n\n${sections.join('\n\n')}`, files, diagnostics };
}

type Read = { kind: 'ok'; text: string; realPath: string } | { kind: 'missing' } | { kind: 'failed'; reason: string };

async function readRulesFile(path: string): Promise<Read> {
  try {
    const text = await readFile(path, 'utf8');
    return { kind: 'ok', text, realPath: await realpath(path) };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') {
      // A link whose target is gone is worth saying; a file that is not there is not.
      const isLink = await lstat(path).then(
        (s) => s.isSymbolicLink(),
        () => false,
      );
      return isLink
        ? { kind: 'failed', reason: 'it is a symbolic link to a file that does not exist: fix or remove the link' }
        : { kind: 'missing' };
    }
    if (code === 'EISDIR') return { kind: 'failed', reason: 'it is a directory, not a file: rules must be a markdown file' };
    if (code === 'ELOOP') return { kind: 'failed', reason: 'it is a symbolic link that leads back to itself: fix or remove the link' };
    const why = error instanceof Error ? error.message : String(error);
    return { kind: 'failed', reason: `it could not be read (${why}): make it readable by this user, or remove it` };
  }
}
