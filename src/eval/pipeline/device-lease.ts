import type { BudgetReservation } from '../locks/memory-budget.js';
import type { PipelineEvent } from '../pipeline-events.js';
import type { HeldDevice } from '../run/evaluation-pipeline.js';
import type { PreparedRoom } from './device-memory-gate.js';
import { leaseDeviceHostWide } from './host-device-lock.js';
import type { PipelineLane } from './pipeline-lane.js';

/** One evaluation's ask for its device. */
export interface DeviceLeaseRequest {
  lane: PipelineLane;
  device: string;
  signal: AbortSignal | undefined;
  emit: (event: PipelineEvent) => void;
  /** Its memory estimate, reserved in the device's host-wide budget. */
  room: PreparedRoom;
  priority: number;
  /** Bytes of the evaluation's estimate already reserved for its workers' contexts. */
  heldBytes: number;
}

/** What the host's evaluators share: the folder of the host-wide locks, and the releases under way. */
export interface DeviceLeaseHost {
  directory: string | undefined;
  visibleDevices: string | undefined;
  /** Host-wide locks being removed; the evaluator's `close` waits for them. */
  releasing: Set<Promise<void>>;
}

/**
 * The device for one evaluation alone: the in-process lease, then (on a GPU) the host-wide lock
 * that keeps other kforge processes of the host off it, then room in its memory budget;
 * `waitedMs` counts every wait.
 */
export async function leaseDevice(request: DeviceLeaseRequest, host: DeviceLeaseHost): Promise<HeldDevice> {
  const { lane, device, signal, emit, room } = request;
  const needed = await room.neededBytes(device);
  const askedAtMs = performance.now();
  // `--wait` counts from the evaluation's turn in this process: what it waits for after that (the
  // host-wide lock, room in the memory budget) is held by other processes.
  const lockSignal = (given: AbortSignal | undefined): AbortSignal | undefined => {
    room.startWaitClock();
    return room.waitSignal(given);
  };
  const lockOptions = {
    directory: host.directory,
    visibleDevices: host.visibleDevices,
    onWait: (holder: { pid: number | null; command: string | null }) => emit({ kind: 'device-waiting', device, reason: 'lock', holder }),
  };
  const lease = await room.waited(() => leaseDeviceHostWide(lane.devices, device, lockOptions, signal, request.priority, lockSignal), signal);
  let reservation: BudgetReservation | null;
  try {
    // The caller's own signal: the budget applies the wait limit itself, so that running past it
    // is a machine fault naming who holds the memory, not a cancellation.
    reservation = await room.reserve(
      device,
      needed,
      signal,
      (holders, freeBytes, capacityBytes) => emit({ kind: 'device-waiting', device, reason: 'memory', neededBytes: needed, freeBytes, capacityBytes, holders }),
      request.heldBytes,
    );
  } catch (error) {
    await lease.release();
    throw error;
  }
  const acquiredAtMs = performance.now();
  emit({ kind: 'device-acquired', device, waitedMs: acquiredAtMs - askedAtMs + lease.waitedMs });
  let released = false;
  return {
    device,
    ...(reservation ? { grantBytes: reservation.grantBytes } : {}),
    release: () => {
      if (released) return;
      released = true;
      emit({ kind: 'device-released', device, heldMs: performance.now() - acquiredAtMs });
      const releasing = Promise.all([reservation?.release(), lease.release()])
        .then(() => undefined)
        .finally(() => host.releasing.delete(releasing));
      host.releasing.add(releasing);
    },
  };
}
