import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

// Linux /proc helpers: the processes a test started through a launcher (npm, a shell), to
// prove none outlives the test, and to kill what would.

/** The parent pid of `pid`, or null when it is gone. */
function parentOf(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: fields after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[1]);
  } catch {
    return null;
  }
}

/** Every live descendant of `pid` (children, their children, ...). */
export function descendantsOf(pid: number): number[] {
  const parents = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const parent = parentOf(Number(entry));
    if (parent !== null) parents.set(Number(entry), parent);
  }
  const found: number[] = [];
  let frontier = [pid];
  while (frontier.length > 0) {
    const next = [...parents].filter(([, parent]) => frontier.includes(parent)).map(([child]) => child);
    found.push(...next);
    frontier = next;
  }
  return found;
}

/** Whether `pid` still runs (a zombie counts as gone). */
export function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** SIGKILLs each pid still alive; returns the ones that were. */
export function killAlive(pids: readonly number[]): number[] {
  const alive = pids.filter(isAlive);
  for (const pid of alive) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone in between
    }
  }
  return alive;
}

/** Processes whose parent is init (orphans), whose command line contains `needle` and whose cwd starts with `cwdPrefix`. */
export function orphansRunning(needle: string, cwdPrefix: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    try {
      const commandLine = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
      const orphan = commandLine.includes(needle) && parentOf(pid) === 1 && isAlive(pid);
      if (orphan && readlinkSync(`/proc/${pid}/cwd`).startsWith(cwdPrefix)) found.push(pid);
    } catch {
      // gone, or not ours to read
    }
  }
  return found;
}
