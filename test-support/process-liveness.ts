import { readFileSync } from 'node:fs';

/**
 * Whether a process is alive: it exists and is not a zombie (a zombie is dead but not yet reaped,
 * which in a container without an init can last).
 */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

/** Waits up to `timeoutMs` for a process to be dead; returns whether it is. */
export async function waitForDeath(pid: number, timeoutMs = 2000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!isProcessAlive(pid)) return true;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return !isProcessAlive(pid);
}

/** Reads `child <pid>` from a fixture's stdout. */
export function childPidFrom(stdout: string): number {
  const match = /child (\d+)/.exec(stdout);
  if (!match?.[1]) throw new Error(`no child pid in fixture output: ${stdout.slice(0, 200)}`);
  return Number(match[1]);
}
