import type { HeldDevice } from '../run/evaluation-pipeline.js';
import { Semaphore } from '../locks/semaphore.js';

export interface DevicePoolOptions {
  /** Device names, e.g. `['cuda:0', 'cuda:1']` or `['cpu']`. */
  devices: readonly string[];
  /** Clock in ms (injected by tests). */
  now?: () => number;
}

/** A device held by one evaluation; `heldMs` once released. */
export interface DeviceLease extends HeldDevice {
  /** Milliseconds spent waiting for the device. */
  readonly waitedMs: number;
}

/** What one device did so far. */
export interface DeviceUsage {
  device: string;
  /** Evaluations assigned to it and not finished. */
  assigned: number;
  /** Leases given out, and the time they were held (ms). */
  leases: number;
  busyMs: number;
  /** Evaluations waiting for it now. */
  waiting: number;
}

interface DeviceState {
  name: string;
  lock: Semaphore;
  assigned: number;
  leases: number;
  busyMs: number;
}

/**
 * One lease per device: the stages that run on a device (the reference, the candidate's load,
 * correctness and timing) hold it, so no two candidates ever use one device at once; different
 * devices run in parallel, and waiting evaluations get it in the order they asked (baseline
 * prefetches after every evaluation).
 * {@link assign} spreads evaluations over the devices before their build starts (a warm worker is
 * bound to its device), choosing the one with the fewest unfinished evaluations.
 */
export class DevicePool {
  readonly #devices: DeviceState[];
  readonly #now: () => number;

  constructor(options: DevicePoolOptions) {
    if (options.devices.length === 0) throw new RangeError('expected at least one device, got none');
    if (new Set(options.devices).size !== options.devices.length) {
      throw new RangeError(`expected distinct device names, got ${options.devices.join(', ')}`);
    }
    this.#devices = options.devices.map((name) => ({ name, lock: new Semaphore(1), assigned: 0, leases: 0, busyMs: 0 }));
    this.#now = options.now ?? (() => performance.now());
  }

  get devices(): readonly string[] {
    return this.#devices.map((device) => device.name);
  }

  /**
   * `device` when given (it must be one of the pool's), else the device with the fewest unfinished
   * evaluations (ties: the first); `release` when the evaluation ends.
   */
  assign(device?: string): { device: string; release: () => void } {
    const chosen =
      device === undefined
        ? this.#devices.reduce((best, candidate) => (candidate.assigned < best.assigned ? candidate : best))
        : this.#devices.find((candidate) => candidate.name === device);
    if (!chosen) throw new RangeError(`expected one of the devices ${this.devices.join(', ')}, got \`${device}\``);
    chosen.assigned += 1;
    let released = false;
    return {
      device: chosen.name,
      release: () => {
        if (released) return;
        released = true;
        chosen.assigned -= 1;
      },
    };
  }

  /**
   * Waits until `device` is free, then holds it alone until the lease is released. A lower
   * `priority` (a baseline prefetch: -1) waits behind every evaluation that asks meanwhile.
   */
  async acquire(device: string, signal?: AbortSignal, priority = 0): Promise<DeviceLease> {
    const state = this.#devices.find((candidate) => candidate.name === device);
    if (!state) throw new RangeError(`expected one of the devices ${this.devices.join(', ')}, got \`${device}\``);
    const askedAtMs = this.#now();
    const release = await state.lock.acquire(signal, { priority });
    const acquiredAtMs = this.#now();
    state.leases += 1;
    let released = false;
    return {
      device,
      waitedMs: acquiredAtMs - askedAtMs,
      release: () => {
        if (released) return;
        released = true;
        state.busyMs += this.#now() - acquiredAtMs;
        release();
      },
    };
  }

  /** Per device: assigned evaluations, leases, busy time and waiters. */
  usage(): DeviceUsage[] {
    return this.#devices.map((device) => ({
      device: device.name,
      assigned: device.assigned,
      leases: device.leases,
      busyMs: device.busyMs,
      waiting: device.lock.waiting,
    }));
  }
}
