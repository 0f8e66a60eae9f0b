/**
 * Linux `/proc` readings of a browser's process tree: which process is which, and how much
 * memory each one holds. PSS shares each shared page among the processes that map it, so the
 * PSS of a browser's processes adds up to the memory the browser really uses; RSS counts shared
 * libraries in full in every process (what task managers tend to show).
 */
import { readFileSync, readdirSync } from 'node:fs';

export interface ProcessInfo {
  pid: number;
  ppid: number;
  /** `/proc/PID/comm`: Firefox names its content processes here ("WebExtensions"). */
  name: string;
  args: string[];
}

export interface MemoryReading {
  rssMb: number;
  pssMb: number;
  /**
   * Pages the process has freed with MADV_FREE that the kernel has not taken back yet: they
   * still count in RSS and PSS until memory runs short, then go without a write. Firefox's
   * allocators free this way, so after a burst of work its PSS overstates what it holds.
   */
  lazyFreeMb: number;
}

function readText(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    // The process ended between listing and reading.
    return null;
  }
}

function processInfo(pid: number): ProcessInfo | null {
  const stat = readText(`/proc/${pid}/stat`);
  if (stat === null) return null;
  // The command name may hold spaces and parentheses: the fields after it follow the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const raw = readText(`/proc/${pid}/cmdline`) ?? '';
  const parts = raw.split('\0').filter((part) => part !== '');
  // Chromium rewrites its children's argv into one string separated by spaces.
  const args = parts.length === 1 ? (parts[0] as string).split(' ') : parts;
  return { pid, ppid: Number(fields[1]), name: (readText(`/proc/${pid}/comm`) ?? '').trim(), args };
}

function allProcesses(): ProcessInfo[] {
  const found: ProcessInfo[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const info = processInfo(Number(entry));
    if (info !== null) found.push(info);
  }
  return found;
}

/** Every process below `root` in the tree (not `root` itself). */
export function descendants(root: number): ProcessInfo[] {
  const children = new Map<number, ProcessInfo[]>();
  for (const p of allProcesses()) children.set(p.ppid, [...(children.get(p.ppid) ?? []), p]);
  const found: ProcessInfo[] = [];
  const queue = [root];
  for (let pid = queue.shift(); pid !== undefined; pid = queue.shift()) {
    for (const child of children.get(pid) ?? []) {
      found.push(child);
      queue.push(child.pid);
    }
  }
  return found;
}

/** RSS and PSS of one process, from `smaps_rollup` (kB there, MB here). */
export function processMemory(pid: number): MemoryReading {
  const rollup = readText(`/proc/${pid}/smaps_rollup`);
  if (rollup === null) throw new Error(`process ${pid} has no memory reading: it has ended`);
  const field = (name: string, optional = false) => {
    const match = new RegExp(`^${name}:\\s+(\\d+) kB$`, 'm').exec(rollup);
    if (match === null && optional) return 0;
    if (match === null) throw new Error(`/proc/${pid}/smaps_rollup has no ${name} line`);
    return Number(match[1]) / 1024;
  };
  // LazyFree: Linux 4.12 and later.
  return { rssMb: field('Rss'), pssMb: field('Pss'), lazyFreeMb: field('LazyFree', true) };
}
