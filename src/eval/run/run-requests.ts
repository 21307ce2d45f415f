import path from 'node:path';
import { runsOnHost } from '../../backends/registry.js';
import { referenceToleranceFields } from '../../core/tolerance.js';
import type { MessageOfType, WorkerEnvironment } from '../process/protocol.js';
import { handoverSocketPath, type ScratchDirectory } from '../process/scratch-directory.js';
import type { CandidateRequest, ReferenceRequest } from '../process/worker-requests.js';
import { deviceCeilings, type DeviceCeilings } from '../timing/device-ceilings.js';
import type { CandidateInputs } from './candidate-inputs.js';
import type { EvaluationSettings } from './evaluation-settings.js';
import { handoverWindowBoundMs, type HandoverFigures } from './output-handover.js';
import type { SeedPlan } from './seeds.js';

/** What an evaluation's requests to its two roles are made of (docs/worker-protocol.md). */
export interface RunRequestContext {
  settings: EvaluationSettings;
  seeds: SeedPlan;
  scratch: ScratchDirectory;
}

/** The hand-over pipe: a FIFO the judge makes in the scratch's `in` folder, read-only to the candidate. */
function handoverPipe(scratch: ScratchDirectory): string {
  return path.join(scratch.inputDirectory, 'handover');
}

/** `overrides` and `memory_grant_bytes`, the same for both roles (absent when not set). */
function sizeFields(settings: EvaluationSettings): { overrides?: Record<string, number | boolean>; memory_grant_bytes?: number } {
  return {
    ...(Object.keys(settings.overrides).length > 0 ? { overrides: { ...settings.overrides } } : {}),
    ...(settings.memoryGrantBytes ? { memory_grant_bytes: Math.floor(settings.memoryGrantBytes) } : {}),
  };
}

/** The guard request field, the same for both roles. */
function guardField(settings: EvaluationSettings): { policy: string; gate_specialisation: boolean } {
  return { policy: settings.guardPolicy, gate_specialisation: settings.shapesGate };
}

/** `ceilings` for the speed-of-light bound where the device is known (none on the cpu backend). */
function ceilingsField(settings: EvaluationSettings, environment: WorkerEnvironment | null): { ceilings?: DeviceCeilings } {
  if (runsOnHost(settings.backend) || !environment) return {};
  const ceilings = deviceCeilings(environment.device, settings.precision);
  return ceilings ? { ceilings } : {};
}

/** Where and how both roles run, and the seeds of their inputs: the same in both requests. */
function machineAndSeeds(settings: EvaluationSettings, seeds: SeedPlan) {
  const { backend, precision, preset, device } = settings;
  return { backend, precision, preset, device, correctness_seeds: seeds.correctness, timing_seeds: seeds.timing };
}

/** The reference request; with `measureBaselines`, it also measures the baselines (not cached yet). */
export function referenceRequest(
  { settings, seeds, scratch }: RunRequestContext,
  environment: WorkerEnvironment | null,
  measureBaselines: boolean,
): ReferenceRequest {
  return {
    v: 1,
    type: 'reference',
    problem: settings.problemPath,
    ...machineAndSeeds(settings, seeds),
    ...referenceToleranceFields(settings.toleranceProfile, settings.precision),
    ...ceilingsField(settings, environment),
    guard: guardField(settings),
    ...(settings.shapes ? { generalisation_seeds: seeds.generalisation } : {}),
    ...sizeFields(settings),
    stage_limit_ms: settings.stageLimitsMs.reference,
    handover_pipe: handoverPipe(scratch),
    handover_socket: handoverSocketPath(scratch),
    baselines: measureBaselines
      ? {
          eager: true,
          compile: true,
          perf_trials: settings.perfTrials,
          warmup_trials: settings.warmupTrials,
          budget_ms: settings.timingBudgetMs,
          ...(settings.warmupMs > 0 ? { warmup_ms: settings.warmupMs } : {}),
        }
      : null,
  };
}

/** The candidate request, reading its staged inputs; with `awaitDevice`, it waits after its build. */
export function candidateRequest(
  { settings, seeds, scratch }: RunRequestContext,
  inputs: CandidateInputs,
  buildDirectory: string,
  awaitDevice: boolean,
): CandidateRequest {
  return {
    v: 1,
    type: 'candidate',
    problem: inputs.problemPath,
    candidate: inputs.candidatePath,
    ...machineAndSeeds(settings, seeds),
    perf_trials: settings.timing ? settings.perfTrials : 0,
    warmup_trials: settings.warmupTrials,
    handover_pipe: handoverPipe(scratch),
    build_dir: buildDirectory,
    guard: guardField(settings),
    ...(settings.shapes ? { generalisation_seeds: seeds.generalisation } : {}),
    ...sizeFields(settings),
    ...(awaitDevice ? { await_device: true } : {}),
    ...(settings.crossCheck ? { cross_check: true } : {}),
    ...(settings.timing && settings.warmupMs > 0 ? { warmup_ms: settings.warmupMs } : {}),
  };
}

/** The guard report's `handover` entry: how the outputs travelled and the longest window, by the judge's clock. */
export function handoverChecks(figures: HandoverFigures): MessageOfType<'guard-checks'> {
  const ipc = figures.ipcError ? `; IPC was not used: ${figures.ipcError}` : '';
  return {
    v: 1,
    type: 'guard-checks',
    stage: 'handover',
    checks: [
      {
        check: 'handover',
        status: 'passed',
        message: `${figures.outputs} outputs (${figures.bytes} bytes) handed to the judge by ${figures.transports.join(' and ')} before the candidate went on; the longest took ${figures.longestReceiveMs.toFixed(2)} ms by the judge's clock for ${figures.longestBytes} bytes (bound ${handoverWindowBoundMs(figures.longestBytes).toFixed(0)} ms), and at most ${figures.longestWindowMs.toFixed(2)} ms passed between the candidate's hand-over and the judge's copy by the parent's${ipc}`,
      },
    ],
  };
}
