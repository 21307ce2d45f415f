import { afterEach, beforeEach } from 'node:test';
import type { ProblemRecord, Run, RunStore } from '../../../src/store/run-store.js';

/**
 * How the conformance suite gets a fresh, empty store: each test opens one with a fake clock and
 * disposes of it afterwards. A backend passes this to `describeRunStoreConformance`.
 */
export type OpenEmptyStore = (options: { now: () => Date }) => Promise<{ store: RunStore; dispose: () => Promise<void> }>;

/** The fake clock's first reading; each reading is one second after the one before. */
export const CLOCK_START_MS = Date.parse('2026-03-01T09:00:00.000Z');

export interface StoreHandle {
  /** The store of the running test. */
  store: RunStore;
  /** The clock's next reading, as the store will see it, without consuming it. */
  peekNow(): string;
}

/** Registers before/after hooks that give each test in the current `describe` a fresh store. */
export function useFreshStore(open: OpenEmptyStore): StoreHandle {
  let dispose: (() => Promise<void>) | undefined;
  let clockMs = CLOCK_START_MS;
  const handle: StoreHandle = {
    store: undefined as unknown as RunStore,
    peekNow: () => new Date(clockMs).toISOString(),
  };
  beforeEach(async () => {
    clockMs = CLOCK_START_MS;
    const opened = await open({
      now: () => {
        const reading = new Date(clockMs);
        clockMs += 1000;
        return reading;
      },
    });
    handle.store = opened.store;
    dispose = opened.dispose;
  });
  afterEach(async () => {
    await dispose?.();
  });
  return handle;
}

/** Problem sources used across the suite (distinct content, so distinct hashes). */
export const PROBLEM_SOURCES = {
  relu: 'import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        return torch.relu(x)\n',
  softmax: 'import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        return torch.softmax(x, dim=-1)\n',
} as const;

/** Stores both problems and a run over them. */
export async function seedRun(
  store: RunStore,
  overrides: { id?: string; strategy?: string } = {},
): Promise<{ run: Run; relu: ProblemRecord; softmax: ProblemRecord }> {
  const relu = await store.upsertProblem({ name: '19_ReLU', source: PROBLEM_SOURCES.relu, path: 'problems/19_ReLU.py' });
  const softmax = await store.upsertProblem({ name: '23_Softmax', source: PROBLEM_SOURCES.softmax });
  const run = await store.createRun({
    ...(overrides.id ? { id: overrides.id } : {}),
    strategy: overrides.strategy ?? 'refine',
    model: 'fake:model',
    config: { backend: 'cpu', rounds: 3, nested: { trials: 5 } },
    problemHashes: [relu.hash, softmax.hash],
  });
  return { run, relu, softmax };
}
