/**
 * The one-line description of every `kforge` command, shown by `kforge --help` and by the
 * command's own help. It lives apart from the commands so that `kforge --help` lists them without
 * loading any command's code (and its libraries): start-up stays well under half a second.
 */
export const COMMAND_DESCRIPTIONS = {
  eval: 'build, check and time a candidate kernel against a PyTorch reference problem',
  optimize: 'search for the fastest correct kernel for one problem or a whole suite, with every step kept in the store',
  runs: 'list and inspect optimisation runs kept in the store',
  report: "a run's report: verdicts, fast_p, geometric-mean speedups, speed of light, tokens and cost, per problem and level",
  export: "a run's model turns as JSON lines (prompt, reply, candidate, verdict, speedups, reward) for training and analysis",
  problems: 'the shipped problem suite: list it, or audit problems for faults a kernel could exploit',
  serve: 'the dashboard: runs, candidate trees, code, diffs, verdicts, timings; step in with hints, edits, stop and resume',
  worker: "evaluate jobs from a Redis queue on this host's GPUs (or CPU) until stopped (see docs/workers.md)",
  workers: 'list the workers connected to a Redis queue, their GPUs and what each is doing',
  cache: 'show or clear the build cache and the baseline cache',
  doctor: 'check that this machine can evaluate kernels, and say what to install when it cannot',
} as const;

/** A top-level command's name. */
export type CommandName = keyof typeof COMMAND_DESCRIPTIONS;
