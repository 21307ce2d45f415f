import type { Precision } from '../../core/verdict.js';

/** A device's ceilings for the speed-of-light bound: bytes per second and FLOP per second. */
export interface DeviceCeilings {
  bandwidth_bytes_per_s: number;
  peak_flops_per_s: number | null;
}

interface KnownDevice {
  /** Matched against the device name the worker reports (`NVIDIA H200`). */
  pattern: RegExp;
  bandwidthBytesPerSecond: number;
  /**
   * Peak of the fastest unit a kernel may honestly use at each precision (fp32 may use 3xTF32 on
   * tensor cores); `native` keeps the problem's own dtypes, which may be fp8 or int8, so its peak is
   * the device's fastest dense rate (fp8 on Hopper and Ada, int8 on Ampere).
   */
  peakFlopsPerSecond: Record<Precision, number>;
}

/**
 * Upper ceilings by device, from the vendors' datasheets (dense, no sparsity). They are upper
 * bounds on purpose: the speed-of-light check rejects only times under half the bound they give,
 * so a bound set too high could reject an honest kernel, and one set too low lets a cheat through.
 * The copy bandwidth measured on this project's H200 (4.3 TB/s, docs/benchmarks/h200-anchors.md) is under the datasheet's 4.8.
 */
const KNOWN_DEVICES: readonly KnownDevice[] = [
  { pattern: /H200/i, bandwidthBytesPerSecond: 4.8e12, peakFlopsPerSecond: { fp32: 4.95e14, fp16: 9.9e14, bf16: 9.9e14, native: 1.979e15 } },
  { pattern: /H100.*PCIe/i, bandwidthBytesPerSecond: 2.0e12, peakFlopsPerSecond: { fp32: 3.78e14, fp16: 7.56e14, bf16: 7.56e14, native: 1.513e15 } },
  { pattern: /H100/i, bandwidthBytesPerSecond: 3.35e12, peakFlopsPerSecond: { fp32: 4.95e14, fp16: 9.9e14, bf16: 9.9e14, native: 1.979e15 } },
  { pattern: /A100/i, bandwidthBytesPerSecond: 2.04e12, peakFlopsPerSecond: { fp32: 1.56e14, fp16: 3.12e14, bf16: 3.12e14, native: 6.24e14 } },
  { pattern: /L40S/i, bandwidthBytesPerSecond: 8.64e11, peakFlopsPerSecond: { fp32: 1.83e14, fp16: 3.66e14, bf16: 3.66e14, native: 7.33e14 } },
];

/**
 * The ceilings for a device name and precision, or null where none are known (the CPU backend,
 * an unlisted GPU): then no speed-of-light bound is computed and nothing is rejected by it.
 */
export function deviceCeilings(deviceName: string, precision: Precision): DeviceCeilings | null {
  const known = KNOWN_DEVICES.find((device) => device.pattern.test(deviceName));
  if (!known) return null;
  return { bandwidth_bytes_per_s: known.bandwidthBytesPerSecond, peak_flops_per_s: known.peakFlopsPerSecond[precision] };
}
