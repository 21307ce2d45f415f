import type { Backend, Preset } from '../core/verdict.js';

/**
 * What a backend's evaluations run on: `gpu` backends share the GPU lane of the pipeline, the
 * Redis queue of GPU workers and the `gpu` problem preset; `cpu` has its own.
 */
export type DeviceKind = Preset;

/** `detect.ts`: the devices a backend evaluates on and what must be present for it to run here. */
export interface BackendDetect {
  readonly kind: DeviceKind;
  /** torch's device type of the backend's tensors (size estimates). */
  readonly torchDevice: 'cpu' | 'cuda';
  /** The device an evaluation runs on: `cpu`, or `cuda:<index>` (index 0 when none is given). */
  deviceName(index?: number): string;
  /** What must be visible for the backend to run (`an NVIDIA GPU`), in a sentence; null when it runs anywhere. */
  readonly needs: string | null;
}

/** The toolchain fields of a build key that only some backends' builds depend on. */
export interface ToolchainKey {
  /** Compute capability built for (`9.0`). */
  capability: string | null;
  /** The first line of `nvcc --version` the worker reported. */
  nvcc: string | null;
  /** TORCH_CUDA_ARCH_LIST as the parent passes it. */
  arch_list: string | null;
}

/** `build.ts`: what a candidate's build output depends on beyond its source, torch, Python and host compiler. */
export interface BackendBuild {
  /**
   * The toolchain fields of the build key, from the candidate worker's `hello` environment and the
   * parent's environment; null fields are not part of this backend's builds.
   */
  toolchainKey(worker: Readonly<Record<string, unknown>>, parent: NodeJS.ProcessEnv): ToolchainKey;
}

/** `clock.ts`: how the backend's per-call times are measured. */
export interface BackendClock {
  /** `device` (CUDA events) or `host` (the host's monotonic clock). */
  readonly clock: 'device' | 'host';
  /** The warm-up by time when none is asked for, ms (0: none, a clock that does not ramp). */
  readonly defaultWarmupMs: number;
  /** What a run's device time is called in a report. */
  readonly timeLabel: string;
}

/** The answer of a diagnostic command, as `kforge doctor` hands it over. */
export interface ToolAnswer {
  ok: boolean;
  stdout: string;
}

/** A check of `kforge doctor` made by running one command. */
export interface ToolCheck {
  id: string;
  label: string;
  command: string;
  args: readonly string[];
  timeoutMs: number;
  /** Whether the answer shows the tool present; default: the command succeeded. */
  found?(answer: ToolAnswer): boolean;
  /** What was found (a version), or why not. */
  detail(answer: ToolAnswer): string;
  fix: string;
}

/** A check of `kforge doctor` that a Python distribution is installed (the doctor's Python probe asks). */
export interface PackageCheck {
  id: string;
  label: string;
  /** The distribution's name for `importlib.metadata.version`. */
  distribution: string;
  fix: string;
}

/** `doctor.ts`: what `kforge doctor` checks for the backend. */
export interface BackendDoctor {
  /** The ids of the checks the backend cannot run without (the shared ones and its own). */
  readonly requires: readonly string[];
  /** The backend's own command checks (run once however many backends list one). */
  readonly tools: readonly ToolCheck[];
  /** The backend's own Python distributions. */
  readonly packages: readonly PackageCheck[];
}

/** `prompt.ts`: what a model is told about writing a candidate for the backend. */
export interface BackendPrompt {
  /** The backend's rules, one sentence each, after the rules every backend shares. */
  readonly rules: readonly string[];
}

/**
 * One backend: everything kforge decides differently per backend, one file each in
 * `src/backends/<name>/` (CONTRIBUTING.md, "Adding a backend"). Code elsewhere asks the registry
 * (`registry.ts`) for a backend's module instead of comparing its name.
 */
export interface BackendModule {
  readonly name: Backend;
  readonly detect: BackendDetect;
  readonly build: BackendBuild;
  readonly clock: BackendClock;
  readonly doctor: BackendDoctor;
  readonly prompt: BackendPrompt;
}
