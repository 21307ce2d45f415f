import { backendModule } from '../../backends/registry.js';
import path from 'node:path';
import type { Logger } from 'pino';
import { deviceCapacityBytes, parseByteSize } from '../devices/device-capacity.js';
import { EvaluationCancelledError } from '../evaluation-cancelled-error.js';
import type { EvaluationSettings } from '../run/evaluation-settings.js';
import { hostGpuName } from '../../backends/nvidia/host-device-names.js';
import { MachineFaultError } from '../machine-fault-error.js';
import { MemoryBudget, type BudgetReservation } from '../locks/memory-budget.js';
import type { BudgetHolder } from '../pipeline-events.js';
import { ProblemTooLargeError } from '../problem/problem-too-large-error.js';
import { estimateEvaluationSize, type SizeEstimateOutcome } from '../problem/size-estimate.js';

/** Reserved for an evaluation whose problem could not be sized (its two processes' fixed cost and some room). */
const UNSIZED_BYTES = 1024 ** 3;

/**
 * A CUDA worker's fixed cost on its device: the context and the warm start's lazy paths (612 MiB
 * measured on an H100 by a probe kept in git history, 34a21c1:bench/gpu/context_probe.py), as the size estimate counts a process
 * (DEVICE_PROCESS_BYTES of worker/kforge_worker/roles/size_estimate.py).
 */
export const WORKER_CONTEXT_BYTES = 768 * 1024 ** 2;

/** The variable that caps the device memory workers' contexts may hold outside any lease. */
export const CONTEXT_BUDGET_VARIABLE = 'KFORGE_CONTEXT_BUDGET_BYTES';

/** The share of a device's budget that contexts outside a lease may hold when the variable is not set. */
const CONTEXT_BUDGET_SHARE = 0.1;

export interface DeviceMemoryGateOptions {
  /** Off: no estimate, no budget (the device lock alone). */
  enabled: boolean;
  python: string;
  workerDirectory: string;
  environment: NodeJS.ProcessEnv;
  /** The host-wide folder of device locks; each device's budget is a folder in it. */
  directory: string;
  logger: Logger;
}

/** One evaluation's way onto a device: its size, its wait limit, its reservation. */
export interface PreparedRoom {
  /** Bytes to reserve on `device`; throws ProblemTooLargeError when they can never fit. */
  neededBytes(device: string): Promise<number>;
  /** The estimate in bytes once known (null: not sized). */
  estimateBytes(): Promise<number | null>;
  /**
   * Starts the wait limit's clock (`--wait`), once: when the evaluation's turn in its own process
   * has come and what it still waits for is held by other processes. The queue of its own process
   * (a batch's earlier candidates, a search's other evaluations) and its build are not counted.
   */
  startWaitClock(): void;
  /** `signal` ending also when the wait limit (`--wait`) has passed (the plain `signal` before the clock starts). */
  waitSignal(signal: AbortSignal | undefined): AbortSignal | undefined;
  /** Runs a wait for the device; past the wait limit a MachineFaultError (`device-wait`). */
  waited<T>(wait: () => Promise<T>, signal: AbortSignal | undefined): Promise<T>;
  /** Reserves the bytes in the device's host-wide budget (null: no budget). */
  reserve(
    device: string,
    bytes: number,
    signal: AbortSignal | undefined,
    onWait: (holders: BudgetHolder[], freeBytes: number, capacityBytes: number) => void,
    /** Bytes of `bytes` that the evaluation's workers hold already in context reservations. */
    heldBytes?: number,
  ): Promise<BudgetReservation | null>;
}

/**
 * Sizes evaluations before they take a device and keeps several kforge processes of a host within
 * its memory (docs/sizes.md): each problem's peak is estimated once (in parallel with the
 * candidate's build), an evaluation that cannot fit is refused, and the estimate is reserved in the
 * device's host-wide {@link MemoryBudget} for as long as the evaluation holds the device, so an
 * evaluation waits for room rather than running out of memory beside another.
 */
export class DeviceMemoryGate {
  readonly #options: DeviceMemoryGateOptions;
  readonly #estimates = new Map<string, Promise<SizeEstimateOutcome>>();
  readonly #capacities = new Map<string, Promise<number | null>>();
  readonly #budgets = new Map<string, MemoryBudget>();

  constructor(options: DeviceMemoryGateOptions) {
    this.#options = options;
  }

  /** Starts sizing the evaluation at once; `scope` `reference` reserves only the reference role's share. */
  prepare(settings: EvaluationSettings, scope: 'evaluation' | 'reference'): PreparedRoom {
    const estimate = this.#options.enabled ? this.#estimate(settings) : null;
    const once = { warned: false };
    let deadlineMs: number | null = null;
    const remainingMs = (): number | null => (deadlineMs === null ? null : Math.max(0, deadlineMs - performance.now()));
    const startClock = (): void => {
      if (deadlineMs === null && settings.deviceWaitMs !== null) deadlineMs = performance.now() + settings.deviceWaitMs;
    };
    return {
      neededBytes: (device) => this.#neededBytes(settings, scope, estimate, device, once),
      estimateBytes: async () => {
        const outcome = estimate ? await estimate : null;
        return outcome?.ok ? outcome.estimate.evaluation_bytes : null;
      },
      startWaitClock: startClock,
      waitSignal: (signal) => {
        const remaining = remainingMs();
        if (remaining === null) return signal;
        const timeout = AbortSignal.timeout(Math.max(1, Math.ceil(remaining)));
        return signal ? AbortSignal.any([signal, timeout]) : timeout;
      },
      waited: async (wait, signal) => {
        try {
          return await wait();
        } catch (error) {
          if (error instanceof EvaluationCancelledError && !signal?.aborted && remainingMs() === 0) {
            throw new MachineFaultError(`waited ${((settings.deviceWaitMs ?? 0) / 1000).toFixed(0)} s for the device, which another evaluation still holds`, {
              resource: 'device-wait',
              hint: 'wait longer (--wait DURATION), or stop the evaluation that holds it',
              retryAfterSeconds: 60,
            });
          }
          throw error;
        }
      },
      reserve: async (device, bytes, signal, onWait, heldBytes) => {
        if (!this.#options.enabled || bytes <= 0) return null;
        const budget = await this.#budget(device);
        if (!budget) return null;
        return budget.reserve(bytes, {
          label: `pid ${process.pid}: ${path.basename(settings.problemPath)} ${scope === 'reference' ? '(baselines)' : path.basename(settings.candidatePath)}`,
          signal,
          waitMs: remainingMs(),
          onWait: (holders, freeBytes) => onWait(holders, freeBytes, budget.capacityBytes),
          heldBytes,
        });
      },
    };
  }

  /**
   * The bytes an evaluation needs on `device` (`scope` `reference`: the reference role's share):
   * the estimate's, or {@link UNSIZED_BYTES} for a problem that could not be sized (said once, in
   * `once`); a problem that cannot fit the device at all is a {@link ProblemTooLargeError}.
   */
  async #neededBytes(
    settings: EvaluationSettings,
    scope: 'evaluation' | 'reference',
    estimate: Promise<SizeEstimateOutcome> | null,
    device: string,
    once: { warned: boolean },
  ): Promise<number> {
    if (!estimate) return 0;
    const outcome = await estimate;
    if (!outcome.ok) {
      // Once per evaluation: room is asked for at the reference's start and again with the candidate's.
      // A problem that cannot be sized is worth a warning; an unusable problem file or override, and
      // an estimate that did not run at all, are reported by the evaluation itself in one sentence.
      const level = outcome.cause === 'problem' ? 'warn' : 'debug';
      if (!once.warned)
        this.#options.logger[level]({ problem: settings.problemPath, reason: outcome.message }, 'the problem could not be sized; reserving a default');
      once.warned = true;
      return UNSIZED_BYTES;
    }
    const capacity = await this.#capacity(device);
    if (capacity !== null && outcome.estimate.evaluation_bytes > capacity) {
      throw new ProblemTooLargeError(settings.problemPath, device, outcome.estimate, capacity);
    }
    return scope === 'reference' ? outcome.estimate.reference_bytes : outcome.estimate.evaluation_bytes;
  }

  /**
   * Room for one worker's CUDA context on `device`, made before its evaluation holds the device
   * and kept while it waits (null: no budget; `no-room` with `onWait` null when it would wait). Waits while the
   * device's contexts would pass their cap (`KFORGE_CONTEXT_BUDGET_BYTES`, default a tenth of the
   * budget, never below two contexts) or the budget has no room, so that workers waiting for the
   * device cannot crowd out the one using it. Release it when the worker has exited.
   */
  async reserveContext(
    device: string,
    label: string,
    signal: AbortSignal,
    /** Called once if it waits; null: no wait, null at once when there is no room. */
    onWait: ((holders: BudgetHolder[], freeBytes: number, capacityBytes: number, capBytes: number) => void) | null,
  ): Promise<BudgetReservation | 'no-room' | null> {
    if (!this.#options.enabled || device === 'cpu') return null;
    const budget = await this.#budget(device);
    if (!budget) return null;
    const configured = this.#options.environment[CONTEXT_BUDGET_VARIABLE];
    const capBytes =
      configured !== undefined && configured.trim() !== ''
        ? parseByteSize(configured, CONTEXT_BUDGET_VARIABLE)
        : Math.max(2 * WORKER_CONTEXT_BYTES, Math.floor(CONTEXT_BUDGET_SHARE * budget.capacityBytes));
    const room = await budget.reserveContext(WORKER_CONTEXT_BYTES, {
      label,
      signal,
      capBytes,
      wait: onWait !== null,
      onWait: (holders, freeBytes) => onWait?.(holders, freeBytes, budget.capacityBytes, capBytes),
    });
    return room ?? 'no-room';
  }

  /** Context reservations waiting for room on `device` now, in any process of the host (0: no budget). */
  async wantedContexts(device: string): Promise<number> {
    if (!this.#options.enabled || device === 'cpu') return 0;
    const budget = await this.#budget(device);
    return budget ? budget.wantedContexts() : 0;
  }

  #estimate(settings: EvaluationSettings): Promise<SizeEstimateOutcome> {
    const key = JSON.stringify([settings.problemPath, settings.overrides, settings.precision, settings.preset, settings.device, settings.timing]);
    let estimate = this.#estimates.get(key);
    if (!estimate) {
      estimate = this.#capacity(settings.device)
        .then((capacityBytes) =>
          estimateEvaluationSize({
            capacityBytes,
            python: this.#options.python,
            workerDirectory: this.#options.workerDirectory,
            environment: this.#options.environment,
            problemPath: settings.problemPath,
            preset: settings.preset,
            precision: settings.precision,
            deviceType: backendModule(settings.backend).detect.torchDevice,
            overrides: settings.overrides,
            timing: settings.timing,
          }),
        )
        .catch((error: unknown) => ({ ok: false as const, cause: 'command' as const, message: (error as Error).message }));
      this.#estimates.set(key, estimate);
    }
    return estimate;
  }

  #capacity(device: string): Promise<number | null> {
    let capacity = this.#capacities.get(device);
    if (!capacity) {
      capacity = deviceCapacityBytes(device, this.#options.environment);
      this.#capacities.set(device, capacity);
    }
    return capacity;
  }

  async #budget(device: string): Promise<MemoryBudget | null> {
    const capacity = await this.#capacity(device);
    if (capacity === null) return null;
    let budget = this.#budgets.get(device);
    if (!budget) {
      const name = device === 'cpu' ? 'cpu' : hostGpuName(Number(device.slice('cuda:'.length)), this.#options.environment.CUDA_VISIBLE_DEVICES);
      budget = new MemoryBudget({ directory: path.join(this.#options.directory, `${name.replace(/[^\w.-]/g, '_')}.budget`), capacityBytes: capacity });
      this.#budgets.set(device, budget);
    }
    return budget;
  }
}
