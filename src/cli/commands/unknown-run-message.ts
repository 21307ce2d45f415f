/** What `kforge report`, `export` and `runs show` say of a run id their store does not hold, with the command that lists the ids. */
export function unknownRunMessage(runId: string, storeLocation: string): string {
  return `no run \`${runId}\` in ${storeLocation}: \`kforge runs list --store ${storeLocation}\` shows the run ids`;
}
