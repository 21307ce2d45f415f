import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cudaDeviceNames, detectVisibleCudaDevices, visibleCudaDeviceCount } from '../../backends/nvidia/cuda-devices.js';
import { DevicePool } from './device-pool.js';
import { EvaluationCancelledError } from '../evaluation-cancelled-error.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const gpus = (count: number) => async () => Array.from({ length: count }, (_, index) => ({ index, name: 'NVIDIA H200', driver: '580.1', memoryMiB: 143771 }));

describe('visible CUDA devices', () => {
  it('are every GPU nvidia-smi lists when CUDA_VISIBLE_DEVICES is unset', async () => {
    assert.deepEqual(await detectVisibleCudaDevices({}, gpus(4)), ['cuda:0', 'cuda:1', 'cuda:2', 'cuda:3']);
    assert.deepEqual(await detectVisibleCudaDevices({}, gpus(0)), []);
  });

  it('follow CUDA_VISIBLE_DEVICES as CUDA reads it', async () => {
    assert.deepEqual(await detectVisibleCudaDevices({ CUDA_VISIBLE_DEVICES: '2,3' }, gpus(8)), ['cuda:0', 'cuda:1']);
    assert.equal(visibleCudaDeviceCount('5', 8), 1);
    assert.equal(visibleCudaDeviceCount('', 8), 0, 'empty hides every GPU');
    assert.equal(visibleCudaDeviceCount('-1', 8), 0);
    assert.equal(visibleCudaDeviceCount('0,1,-1,2', 8), 2, 'an invalid entry ends the list');
    assert.equal(visibleCudaDeviceCount('0,9,1', 8), 1, 'an index past the GPUs ends the list');
    assert.equal(visibleCudaDeviceCount('1,1', 8), 1, 'a repeated index ends the list');
    assert.equal(visibleCudaDeviceCount(' 0 , 1 ', 8), 2);
    assert.equal(visibleCudaDeviceCount('GPU-8f6c1c1e-1234-5678-9abc-def012345678,MIG-abc', 1), 2, 'UUIDs count as given');
    assert.deepEqual(cudaDeviceNames(3), ['cuda:0', 'cuda:1', 'cuda:2']);
  });
});

describe('DevicePool', () => {
  it('never lets two leases of one device overlap, and uses every device', async () => {
    const devices = await detectVisibleCudaDevices({ CUDA_VISIBLE_DEVICES: '1,3,5' }, gpus(8));
    const pool = new DevicePool({ devices });
    const holding = new Map<string, number>();
    const intervals: Array<{ device: string; start: number; end: number }> = [];
    let maxTogether = 0;
    const job = async (index: number): Promise<void> => {
      const assignment = pool.assign();
      try {
        await sleep(index % 3);
        const lease = await pool.acquire(assignment.device);
        const start = performance.now();
        holding.set(lease.device, (holding.get(lease.device) ?? 0) + 1);
        assert.equal(holding.get(lease.device), 1, `${lease.device} is held twice`);
        maxTogether = Math.max(maxTogether, [...holding.values()].filter((count) => count > 0).length);
        await sleep(2 + (index % 5));
        holding.set(lease.device, 0);
        intervals.push({ device: lease.device, start, end: performance.now() });
        lease.release();
        lease.release();
      } finally {
        assignment.release();
      }
    };
    await Promise.all(Array.from({ length: 60 }, (_, index) => job(index)));
    for (const device of devices) {
      const own = intervals.filter((interval) => interval.device === device).sort((a, b) => a.start - b.start);
      assert.ok(own.length >= 15, `${device} ran ${own.length} leases`);
      for (let index = 1; index < own.length; index += 1) assert.ok(own[index]!.start >= own[index - 1]!.end, `${device}: leases overlap`);
    }
    assert.equal(maxTogether, 3, 'the three devices ran at the same time');
    const usage = pool.usage();
    assert.deepEqual(
      usage.map((entry) => entry.leases).reduce((a, b) => a + b),
      60,
    );
    assert.ok(usage.every((entry) => entry.assigned === 0 && entry.waiting === 0 && entry.busyMs > 0));
  });

  it('lets an evaluation that asks later go before a waiting baseline prefetch', async () => {
    const pool = new DevicePool({ devices: ['cuda:0'] });
    const busy = await pool.acquire('cuda:0');
    const order: string[] = [];
    const prefetch = pool.acquire('cuda:0', undefined, -1).then((lease) => {
      order.push('prefetch');
      lease.release();
    });
    const evaluation = pool.acquire('cuda:0').then((lease) => {
      order.push('evaluation');
      lease.release();
    });
    busy.release();
    await Promise.all([prefetch, evaluation]);
    assert.deepEqual(order, ['evaluation', 'prefetch']);
  });

  it('assigns to the device with the fewest unfinished evaluations', () => {
    const pool = new DevicePool({ devices: ['cuda:0', 'cuda:1'] });
    const first = pool.assign();
    const second = pool.assign();
    const third = pool.assign();
    assert.deepEqual([first.device, second.device, third.device], ['cuda:0', 'cuda:1', 'cuda:0']);
    second.release();
    assert.equal(pool.assign().device, 'cuda:1');
  });

  it('hands a device out in the order it was asked for, and drops a waiter that gives up', async () => {
    const pool = new DevicePool({ devices: ['cpu'] });
    const held = await pool.acquire('cpu');
    const order: number[] = [];
    const controller = new AbortController();
    const waiting = [1, 2, 3].map((index) =>
      pool.acquire('cpu', index === 2 ? controller.signal : undefined).then((lease) => {
        order.push(index);
        lease.release();
      }),
    );
    controller.abort();
    await assert.rejects(waiting[1]!, EvaluationCancelledError);
    held.release();
    await Promise.all([waiting[0], waiting[2]]);
    assert.deepEqual(order, [1, 3]);
    await assert.rejects(pool.acquire('cuda:7'), /expected one of the devices cpu/);
  });
});
