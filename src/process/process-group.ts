/**
 * Process groups: a shell command or a stdio MCP server runs as the leader of its own
 * group, so everything it starts — pipelines, `&` jobs, a `nohup` daemon, the real server
 * under an `npx` wrapper — can be signalled at once with `kill(-pgid)`. A process that
 * leaves the group on purpose (`setsid`) is not reached.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import { errnoOf } from './errno.js';

/** How long {@link terminateGroup} waits after SIGKILL for the group to be gone. */
const KILL_WAIT_MS = 2000;

/**
 * Sends `signal` to every process of group `pgid` (0 only checks). True when at least
 * one process received it; false when the group no longer exists.
 */
export function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch (error) {
    // EPERM: a member changed its user (a setuid program); it exists all the same.
    if (errnoOf(error) === 'EPERM') return true;
    return false;
  }
}

/**
 * Whether group `pgid` still has a live process. Zombies (dead, waiting to be reaped by
 * their parent or init) do not count: on Linux `/proc` tells them apart; elsewhere any
 * member counts as live.
 */
export function groupAlive(pgid: number): boolean {
  if (!signalGroup(pgid, 0)) return false;
  if (process.platform !== 'linux') return true;
  return liveMembers(pgid).length > 0;
}

/** Pids of the live (not zombie) processes of group `pgid`, read from `/proc` (Linux only). */
function liveMembers(pgid: number): number[] {
  const members: number[] = [];
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return members;
  }
  for (const name of names) {
    const first = name.charCodeAt(0);
    if (first < 48 || first > 57) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, 'latin1');
    } catch {
      continue; // Exited while we looked.
    }
    // "pid (comm) state ppid pgrp …": comm may contain spaces and parentheses, so parse after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const state = fields[0];
    if (Number(fields[2]) === pgid && state !== 'Z' && state !== 'X') members.push(Number(name));
  }
  return members;
}

/**
 * Stops group `pgid`: SIGTERM, then SIGKILL to whatever is left after `graceMs`, then
 * waits (up to 2 s) until no live member remains. Answers which signal it took:
 * `none` (the group was already gone), `SIGTERM` or `SIGKILL`.
 */
export async function terminateGroup(pgid: number, graceMs: number): Promise<'none' | 'SIGTERM' | 'SIGKILL'> {
  if (!signalGroup(pgid, 'SIGTERM')) return 'none';
  if (await waitUntilGone(pgid, graceMs)) return 'SIGTERM';
  signalGroup(pgid, 'SIGKILL');
  await waitUntilGone(pgid, KILL_WAIT_MS);
  return 'SIGKILL';
}

/** Polls (there is no event for "a group is empty") until the group is gone or `ms` passed. */
async function waitUntilGone(pgid: number, ms: number): Promise<boolean> {
  const deadline = performance.now() + ms;
  let interval = 10;
  while (groupAlive(pgid)) {
    const left = deadline - performance.now();
    if (left <= 0) return false;
    await delay(Math.min(interval, left));
    interval = Math.min(interval * 2, 100);
  }
  return true;
}

/**
 * Process groups started detached (shell commands, stdio MCP servers) that must not outlive
 * this process: one list and one synchronous exit hook for all of them, each owner holding
 * its own set of what it started.
 */
const owners = new Set<ReadonlySet<number>>();
let exitHookInstalled = false;

/**
 * Registers a set of process-group ids (the owner keeps adding and removing its groups) to
 * be SIGKILLed if the Node process exits first.
 */
export function killOnExit(groups: ReadonlySet<number>): void {
  owners.add(groups);
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // Synchronous by necessity: nothing asynchronous runs after 'exit'.
  process.once('exit', () => {
    for (const set of owners) killGroups(set);
  });
}

/** SIGKILLs every group of `groups`, synchronously, so it also works while the process exits. */
export function killGroups(groups: Iterable<number>): void {
  for (const pgid of groups) signalGroup(pgid, 'SIGKILL');
}
