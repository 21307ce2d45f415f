import { runsOnHost } from '../../../backends/registry.js';
import { cpus } from 'node:os';
import type { Backend, Environment } from '../../../core/verdict.js';

/** What the prompt tells the model about the machine its kernel will run on. */
export interface TargetDevice {
  /** `NVIDIA H200`, or the CPU's model name. */
  name: string;
  backend: Backend;
  /** `9.0` for an H100/H200; null on the cpu backend or when unknown. */
  computeCapability: string | null;
  smCount: number | null;
  /** Hardware threads the kernel may use (cpu backend). */
  threads: number | null;
  l2Bytes: number | null;
  /** Memory bandwidth from the datasheet, GB/s. */
  datasheetBandwidthGBs: number | null;
  /** Measured device-to-device copy bandwidth (read + write), GB/s. */
  measuredCopyBandwidthGBs: number | null;
  /** Peak dense throughput by unit, TFLOP/s (`bf16 tensor core`, `fp32 CUDA core`). */
  peakTflops: Record<string, number>;
}

interface KnownDevice {
  match: RegExp;
  datasheetBandwidthGBs: number;
  measuredCopyBandwidthGBs: number | null;
  peakTflops: Record<string, number>;
}

/**
 * Ceilings of GPUs kforge knows. H200 figures are the ones measured on the project's H200
 * (docs/benchmarks/h200-anchors.md); the others are datasheet figures only.
 */
const KNOWN_DEVICES: readonly KnownDevice[] = [
  {
    match: /H200/i,
    datasheetBandwidthGBs: 4800,
    measuredCopyBandwidthGBs: 4300,
    peakTflops: { 'bf16 tensor core (measured, 8192^3 GEMM)': 769, 'bf16 tensor core (datasheet)': 990, 'fp32 CUDA core (datasheet)': 67 },
  },
  {
    match: /H100/i,
    datasheetBandwidthGBs: 3350,
    measuredCopyBandwidthGBs: null,
    peakTflops: { 'bf16 tensor core (datasheet)': 989, 'fp32 CUDA core (datasheet)': 67 },
  },
  {
    match: /A100/i,
    datasheetBandwidthGBs: 2039,
    measuredCopyBandwidthGBs: null,
    peakTflops: { 'bf16 tensor core (datasheet)': 312, 'fp32 CUDA core (datasheet)': 19.5 },
  },
  {
    match: /L40S/i,
    datasheetBandwidthGBs: 864,
    measuredCopyBandwidthGBs: null,
    peakTflops: { 'bf16 tensor core (datasheet)': 362, 'fp32 CUDA core (datasheet)': 91.6 },
  },
];

function numberOrNull(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

function capabilityOf(value: unknown): string | null {
  if (typeof value === 'string' && value) return value;
  if (Array.isArray(value) && value.length === 2) return `${String(value[0])}.${String(value[1])}`;
  if (typeof value === 'number') return value.toFixed(1);
  return null;
}

/** The host's own CPU, before any evaluation has reported the worker's environment. */
export function describeHostCpu(): TargetDevice {
  const cores = cpus();
  return {
    name: cores[0]?.model.trim() || 'cpu',
    backend: 'cpu',
    computeCapability: null,
    smCount: null,
    threads: cores.length || null,
    l2Bytes: null,
    datasheetBandwidthGBs: null,
    measuredCopyBandwidthGBs: null,
    peakTflops: {},
  };
}

/** A GPU target known only by name (before the first evaluation reports more). */
export function describeNamedDevice(name: string, backend: Backend): TargetDevice {
  return withKnownCeilings({
    name,
    backend,
    computeCapability: null,
    smCount: null,
    threads: null,
    l2Bytes: null,
    datasheetBandwidthGBs: null,
    measuredCopyBandwidthGBs: null,
    peakTflops: {},
  });
}

/** The target as the evaluator's worker reported it (`environment` of an EvaluationResult). */
export function targetFromEnvironment(environment: Environment, backend: Backend): TargetDevice {
  const isCpu = runsOnHost(backend);
  const cpuName = typeof environment.cpu === 'string' ? environment.cpu : null;
  return withKnownCeilings({
    name: isCpu ? (cpuName ?? environment.device) : environment.device,
    backend,
    computeCapability: isCpu ? null : capabilityOf(environment.capability),
    smCount: isCpu ? null : numberOrNull(environment.sm_count),
    threads: numberOrNull(environment.threads),
    l2Bytes: numberOrNull(environment.l2_bytes),
    datasheetBandwidthGBs: null,
    measuredCopyBandwidthGBs: null,
    peakTflops: {},
  });
}

function withKnownCeilings(target: TargetDevice): TargetDevice {
  if (runsOnHost(target.backend)) return target;
  const known = KNOWN_DEVICES.find((device) => device.match.test(target.name));
  if (!known) return target;
  return {
    ...target,
    datasheetBandwidthGBs: known.datasheetBandwidthGBs,
    measuredCopyBandwidthGBs: known.measuredCopyBandwidthGBs,
    peakTflops: known.peakTflops,
  };
}

/** The target in a few lines for a prompt. */
export function describeTarget(target: TargetDevice): string[] {
  const lines = [`Device: ${target.name} (${target.backend} backend)`];
  if (target.computeCapability) lines.push(`Compute capability: ${target.computeCapability}`);
  if (target.smCount !== null) lines.push(`SM count: ${target.smCount}`);
  if (target.threads !== null) lines.push(`Hardware threads: ${target.threads}`);
  if (target.l2Bytes !== null) lines.push(`L2 cache: ${(target.l2Bytes / 2 ** 20).toFixed(0)} MiB`);
  if (target.datasheetBandwidthGBs !== null) {
    const measured = target.measuredCopyBandwidthGBs === null ? '' : `, ${target.measuredCopyBandwidthGBs} GB/s measured (copy)`;
    lines.push(`Memory bandwidth: ${target.datasheetBandwidthGBs} GB/s datasheet${measured}`);
  }
  for (const [unit, tflops] of Object.entries(target.peakTflops)) lines.push(`Peak ${unit}: ${tflops} TFLOP/s`);
  return lines;
}
