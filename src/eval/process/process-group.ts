/**
 * Sends `signal` to every process of the group led by `groupId` (a worker spawned with
 * `detached: true` leads its own group). Returns false when no process of the group is left.
 */
export function signalProcessGroup(groupId: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-groupId, signal);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw error;
  }
}

/** Whether any process of the group is still alive (zombies included until they are reaped). */
export function isProcessGroupAlive(groupId: number): boolean {
  return signalProcessGroup(groupId, 0);
}

const liveGroups = new Set<number>();
let exitHookInstalled = false;

/**
 * Remembers a group so that it is killed if this Node process exits while the group lives
 * (execa's own clean-up does not apply to detached subprocesses).
 */
export function trackProcessGroup(groupId: number): void {
  liveGroups.add(groupId);
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on('exit', () => {
      for (const id of liveGroups) signalProcessGroup(id, 'SIGKILL');
    });
  }
}

/** Forgets a group once it has been killed. */
export function untrackProcessGroup(groupId: number): void {
  liveGroups.delete(groupId);
}
