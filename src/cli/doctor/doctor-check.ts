import type { Backend } from '../../core/verdict.js';

/** Output of a short diagnostic command. `ok` is false when it is missing, failed or timed out. */
export interface ToolRun {
  ok: boolean;
  stdout: string;
  stderr: string;
}

/** Runs a diagnostic command; replaced in tests. */
export type ToolRunner = (command: string, args: readonly string[], timeoutMs: number) => Promise<ToolRun>;

/** One finding of `kforge doctor`. */
export interface DoctorCheck {
  id: string;
  label: string;
  ok: boolean;
  /** What was found (a version, a path) or what is wrong. */
  detail: string;
  /** The command or step that fixes it, when it is not ok. */
  fix?: string;
  /** Backends that cannot run without it. Empty for information only. */
  requiredFor: Backend[];
}
