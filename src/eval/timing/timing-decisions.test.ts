import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { anchorBaselines } from './baseline-anchor.js';
import { summarizeTimes } from './statistics.js';
import { BatchContents, contentCount, derivedSeed, timedCallContents } from './timed-contents.js';
import { TimingBudget, WARMUP_CALL_LIMIT, warmupCallLimit } from './timing-budget.js';
import { timingNotes } from '../../cli/rendering/render-timing-notes.js';
import { summarizeTiming } from './timing-summary.js';
import { baselineFigure, boundedFigures, loadFactor, type TimedBatch } from './trusted-bound.js';

const repeat = (value: number, count: number): number[] => Array.from({ length: count }, () => value);
/** Three batches of 100 calls of `perCallMs` each, behind a channel of `pingMs`. */
const batchesOf = (perCallMs: number, pingMs = 0.3): TimedBatch[] =>
  [0, 1, 2].map(() => ({ calls: 100, elapsedMs: 100 * perCallMs + pingMs, overheadMs: [pingMs, pingMs * 1.2, pingMs] }));

describe('the trusted bound (docs/timing.md, P1)', () => {
  it('keeps an honest in-process figure at or above the batches', () => {
    const events = summarizeTimes(repeat(0.21, 100));
    const result = boundedFigures(events, summarizeTimes(repeat(0.25, 100)), batchesOf(0.2));
    assert.equal(result.candidate, events);
    assert.equal(result.trusted?.source, 'in-process');
    assert.ok(Math.abs(result.trusted!.trusted_ms - 0.2) < 1e-9);
    assert.equal(result.trusted?.loose, false);
  });

  it('replaces a forged clock by the batches: a 100x shrink gains nothing', () => {
    const forged = summarizeTimes(repeat(0.002, 100));
    const result = boundedFigures(forged, summarizeTimes(repeat(0.003, 100)), batchesOf(0.2));
    assert.equal(result.trusted?.source, 'trusted-batch');
    assert.ok(Math.abs(result.candidate.median - 0.2) < 1e-9, `${result.candidate.median}`);
    assert.equal(result.candidate.n, 3);
    assert.ok(result.wall!.median >= result.trusted!.bound_ms, 'the wall figure is bounded too');
  });

  it('lets a figure within the slack stand (batches run on warm caches, events on a flushed L2)', () => {
    const events = summarizeTimes(repeat(0.185, 100));
    assert.equal(boundedFigures(events, undefined, batchesOf(0.2)).trusted?.source, 'in-process');
  });

  it('counts the channel against the batch and calls the bound loose when the channel dominates', () => {
    const slowChannel = [{ calls: 10, elapsedMs: 2.1, overheadMs: [1.0, 1.2, 1.1] }];
    const result = boundedFigures(summarizeTimes(repeat(0.05, 10)), undefined, slowChannel);
    assert.equal(result.trusted?.loose, true);
    assert.ok(result.trusted!.bound_ms < 0.03, `${result.trusted!.bound_ms}`);
    assert.equal(result.trusted?.source, 'in-process', 'a loose bound does not replace an honest figure');
  });

  it('divides the bound by the load factor eager showed beside the candidate (an oversubscribed host)', () => {
    const honest = summarizeTimes(repeat(0.04, 100));
    const busyBatches = batchesOf(0.15);
    assert.equal(boundedFigures(honest, undefined, busyBatches).trusted?.source, 'trusted-batch', 'without the factor: replaced');
    const load = loadFactor(repeat(1.0, 30), [3.6, 3.9, 4.1]);
    assert.ok(Math.abs(load - 3.9) < 1e-9);
    const bounded = boundedFigures(honest, undefined, busyBatches, load);
    assert.equal(bounded.trusted?.source, 'in-process');
    assert.equal(bounded.trusted?.load_factor, load);
    assert.equal(
      boundedFigures(summarizeTimes(repeat(0.0004, 100)), undefined, busyBatches, load).trusted?.source,
      'trusted-batch',
      'a 100x forgery still loses',
    );
    assert.equal(loadFactor(repeat(1.0, 30), [0.8, 0.9, 0.85]), 1, 'never below 1');
    assert.equal(loadFactor(undefined, undefined), 1);
  });

  it('reports the in-process figure unbounded when no batch ran', () => {
    const events = summarizeTimes([1, 2, 3]);
    assert.deepEqual(boundedFigures(events, undefined, []), { candidate: events, wall: undefined, trusted: null });
  });

  it('takes a launch-bound baseline at its batches, like the candidate', () => {
    const launchBound = baselineFigure(summarizeTimes(repeat(0.005, 20)), [0.02, 0.021, 0.02]);
    assert.equal(launchBound.launchBound, true);
    assert.equal(launchBound.stats.median, 0.02);
    const deviceBound = baselineFigure(summarizeTimes(repeat(0.5, 20)), [0.48, 0.49, 0.5]);
    assert.equal(deviceBound.launchBound, false);
    assert.equal(deviceBound.stats.median, 0.5);
  });
});

describe('re-anchoring cached baselines', () => {
  const stats = (median: number, spread: number) => summarizeTimes(Array.from({ length: 30 }, (_, index) => median + (spread * ((index % 5) - 2)) / 2));

  it('keeps the cache when eager re-timed now agrees with it', () => {
    const anchor = anchorBaselines({ earlier: stats(1.0, 0.01), anchor: stats(1.005, 0.01), cached: true, candidate: stats(0.5, 0.005), clock: 'device' });
    assert.equal(anchor.used, 'cached');
    assert.equal(anchor.agreed, true);
    assert.equal(anchor.too_busy, false);
  });

  it('on the host clock, uses the re-timing and flags compile when the cached eager drifted (the 1.57x / 0.66x gelu case)', () => {
    const anchor = anchorBaselines({ earlier: stats(1.0, 0.01), anchor: stats(1.6, 0.01), cached: true, candidate: stats(0.5, 0.005), clock: 'host' });
    assert.equal(anchor.used, 'anchor');
    assert.equal(anchor.compile_unconfirmed, true);
    assert.equal(anchor.too_busy, true);
    assert.match(anchor.reasons[0]!, /eager moved by 60\.0%/);
  });

  it('calls a wide candidate interval a busy machine even when eager agrees', () => {
    const anchor = anchorBaselines({ earlier: stats(1.0, 0.01), anchor: stats(1.0, 0.01), cached: false, candidate: stats(0.5, 0.2), clock: 'device' });
    assert.equal(anchor.used, 'measured');
    assert.equal(anchor.too_busy, true);
    assert.match(anchor.reasons.join(), /the candidate's 95% interval/);
  });

  it('on a device clock, takes the faster of two eager figures that disagree: a disturbance only adds time', () => {
    // As on the H100 (2026-12-06): KernelBench 2_ConvTranspose2d_BiasAdd_Clamp_Scaling_Clamp_Divide's
    // cached eager at 12.6 ms, re-timed beside the candidate at 27.5 ms.
    const slower = anchorBaselines({ earlier: stats(12.6, 0.05), anchor: stats(27.5, 0.1), cached: true, candidate: stats(18.2, 0.05), clock: 'device' });
    assert.equal(slower.used, 'cached');
    assert.equal(slower.compile_unconfirmed, false);
    assert.equal(slower.too_busy, true);
    assert.match(slower.reasons[0]!, /eager moved by 118\.3%/);
    const faster = anchorBaselines({ earlier: stats(3.13, 0.02), anchor: stats(2.72, 0.02), cached: false, candidate: stats(2.35, 0.02), clock: 'device' });
    assert.equal(faster.used, 'anchor', 'a first timing slower than the re-timing gives way to it');
    assert.equal(faster.compile_unconfirmed, true);
  });

  it('re-anchors the speedups in the summary: the re-timing on the host clock, the faster figure on a device', () => {
    const summary = (clock: 'device' | 'host') =>
      summarizeTiming({
        clock,
        candidate: { v: 1, type: 'timing', times_ms: repeat(1, 20), samples: [] },
        eager: { times_ms: repeat(2, 20) },
        compile: { times_ms: repeat(1.5, 20) },
        baselineCached: true,
        anchor: { times_ms: repeat(3, 20) },
      });
    const host = summary('host');
    assert.equal(host.speedup_vs_eager, 3);
    assert.equal(host.speedup_vs_best, 1.5);
    assert.equal(host.baseline_anchor?.used, 'anchor');
    const device = summary('device');
    assert.equal(device.speedup_vs_eager, 2);
    assert.equal(device.baseline_anchor?.used, 'cached');
    assert.equal(device.baseline_anchor?.too_busy, true);
  });
});

describe('the hold ahead of the flush (docs/timing.md)', () => {
  const plain = { dim: (text: string) => text };

  it("carries each series' hold and exposed calls, and says when launches outran the hold", () => {
    const summary = summarizeTiming({
      clock: 'device',
      candidate: { v: 1, type: 'timing', times_ms: repeat(0.5, 100), samples: [], hold_ms: 0.04, exposed_calls: 1 },
      eager: { times_ms: repeat(0.6, 100), hold_ms: 0.03, exposed_calls: 0 },
      compile: { times_ms: repeat(0.55, 100), hold_ms: 5, exposed_calls: 40 },
      baselineCached: false,
    });
    assert.deepEqual(summary.hold, {
      candidate: { hold_ms: 0.04, exposed_calls: 1, calls: 100 },
      eager: { hold_ms: 0.03, exposed_calls: 0, calls: 100 },
      compile: { hold_ms: 5, exposed_calls: 40, calls: 100 },
    });
    const notes = timingNotes(summary, plain).filter((line) => line.includes('still launching'));
    assert.equal(notes.length, 1);
    assert.match(notes[0]!, /torch\.compile 40 of 100 timed calls/);
    assert.doesNotMatch(notes[0]!, /candidate/, 'one exposed call in a hundred is not worth a line');
  });

  it('leaves the hold out where no series has one (cpu, or baselines cached before it)', () => {
    const summary = summarizeTiming({
      clock: 'host',
      candidate: { v: 1, type: 'timing', times_ms: repeat(0.5, 20), samples: [] },
      eager: { times_ms: repeat(0.6, 20) },
      compile: null,
      baselineCached: true,
    });
    assert.equal(summary.hold, undefined);
    assert.equal(timingNotes(summary, plain).filter((line) => line.includes('still launching')).length, 0);
  });
});

describe('launch-bound figures (docs/timing.md)', () => {
  const plain = { dim: (text: string) => text };
  // Eager's single calls at 4.5 ms, its back-to-back batches at 5.2 ms a call, its host-inclusive time 4.5 ms.
  const input = (clock: 'device' | 'host') =>
    summarizeTiming({
      clock,
      candidate: { v: 1, type: 'timing', times_ms: repeat(17.6, 20), wall_ms: repeat(17.6, 20), samples: [] },
      eager: { times_ms: repeat(4.5, 20), wall_ms: repeat(4.5, 20), batch_ms: [5.2, 5.3, 5.2] },
      compile: null,
      baselineCached: false,
    });

  it('on a device clock, a baseline whose batches are slower than its events is launch-bound and says so', () => {
    const summary = input('device');
    assert.deepEqual(summary.launch_bound, { candidate: false, eager: true, compile: false });
    assert.equal(summary.eager_ms?.median, 5.2);
    const notes = timingNotes(summary, plain);
    assert.ok(notes.some((line) => line.trim().startsWith('launch-bound (eager)')));
    assert.ok(notes.some((line) => line.trim().startsWith('host-inclusive per call')));
  });

  it('on the host clock (cpu) nothing is launch-bound, and the host-inclusive line repeats nothing', () => {
    const summary = input('host');
    assert.equal(summary.clock, 'host');
    assert.equal(summary.launch_bound, undefined);
    assert.equal(summary.eager_ms?.median, 4.5, "the baseline's calls as measured: its batches are the host's load");
    const notes = timingNotes(summary, plain);
    assert.ok(!notes.some((line) => line.trim().startsWith('launch-bound') || line.trim().startsWith('host-inclusive')), notes.join('\n'));
  });

  it('a launch-bound eager on an idle host is not load: a candidate running its operators gains nothing', () => {
    // Shaped on KernelBench level-3 28_VisionTransformer on the H100 (2026-12-06): the candidate runs
    // eager's own PyTorch operators (own share 0.2%). Events: 1.46 ms for the candidate, 1.37 for
    // eager; back to back the host sets the pace (3.48 and 4.38 ms a call), and a single call's
    // host-inclusive time says the same (3.57 and 4.56 ms). Before, the load factor read eager's
    // batches over its events (3.2), divided the candidate's bound by it, and reported 3.0x.
    const summary = summarizeTiming({
      clock: 'device',
      candidate: { v: 1, type: 'timing', times_ms: repeat(1.456, 20), wall_ms: repeat(3.57, 20), samples: [] },
      batches: [0, 1, 2].map(() => ({ calls: 14, elapsedMs: 14 * 3.476 + 0.2, overheadMs: [0.2, 0.25, 0.2] })),
      eager: { times_ms: repeat(1.37, 20), wall_ms: repeat(4.56, 20), batch_ms: [4.38, 4.4, 4.35] },
      compile: { times_ms: repeat(1.1, 20), wall_ms: repeat(2.98, 20), batch_ms: [3.01, 3.02, 3.0] },
      baselineCached: false,
      anchor: { times_ms: repeat(1.38, 30), wall_ms: repeat(4.59, 30), batch_ms: [4.59, 4.6, 4.55] },
    });
    assert.equal(summary.trusted?.load_factor, 1);
    assert.equal(summary.trusted?.source, 'trusted-batch', "the candidate's events are below its own batches, as eager's are");
    assert.equal(summary.eager_ms?.median, 4.38);
    // The candidate's reported figure is its batches' already, which its host-inclusive time matches.
    assert.deepEqual(summary.launch_bound, { candidate: false, eager: true, compile: true });
    assert.ok(summary.speedup_vs_eager! > 1.2 && summary.speedup_vs_eager! < 1.3, `${summary.speedup_vs_eager}`);
    assert.ok(!summary.baseline_anchor?.reasons.some((reason) => reason.includes('oversubscribed')), 'an idle host is not called oversubscribed');
  });

  it('divides the bound by the load when the host-inclusive single calls show one (a busy host, not a launch-bound call)', () => {
    assert.equal(loadFactor(repeat(4.5, 30), [4.6, 4.4, 4.5]), 1);
    assert.ok(Math.abs(loadFactor(repeat(1.0, 30), [2.0, 2.2, 2.1]) - 2.1) < 1e-9);
  });

  it("on the host clock, a busy host's slow batches never swap a baseline's figure for three batches", () => {
    // As measured on a loaded 2-core host (KernelBench 26_GELU_ at batch_size=16): eager's batches
    // lost time slices, the re-timing beside the candidate showed by how much (load 5.16 / 4.5).
    const busy = (clock: 'device' | 'host') =>
      summarizeTiming({
        clock,
        candidate: { v: 1, type: 'timing', times_ms: repeat(17.6, 30), samples: [] },
        eager: { times_ms: repeat(4.4, 30), batch_ms: [5.0, 5.1, 5.0] },
        compile: null,
        baselineCached: false,
        anchor: { times_ms: repeat(4.5, 30), batch_ms: [5.05, 5.16, 77.2] },
      });
    const host = busy('host');
    assert.equal(host.eager_ms?.median, 4.4, "eager's own 30 calls, not its 3 batches");
    assert.equal(host.eager_ms?.n, 30);
    const device = busy('device');
    assert.equal(device.eager_ms?.median, 4.4, "on a device too, batches slowed by the host's load (the re-timing's factor) are not a launch-bound call");
    assert.equal(device.launch_bound, undefined);
  });
});

describe('the timing budget', () => {
  it('cuts warm-up at a tenth and timed calls at 80%, never under ten calls', () => {
    let now = 0;
    const budget = new TimingBudget({ budgetMs: 1000, perfTrials: 100, warmupTrials: 10, now: () => now });
    budget.start();
    assert.equal(budget.moreWarmup(0), true);
    now = 150;
    assert.equal(budget.moreWarmup(1), false);
    now = 5000;
    for (let index = 0; index < 9; index += 1) assert.equal(budget.moreTimed(index), true);
    assert.equal(budget.moreTimed(9), false);
    const report = budget.report();
    assert.deepEqual([report.timed_calls, report.warmup_calls, report.requested_calls], [10, 2, 100]);
    assert.match(report.reason!, /10 timed calls and 2 warm-up calls fit the timing budget of 1 s/);
  });

  it('warms up past the calls asked for until the warm-up by time has passed, within a tenth and the call limit', () => {
    let now = 0;
    const budget = new TimingBudget({ budgetMs: 30_000, perfTrials: 100, warmupTrials: 2, warmupMs: 1000, now: () => now });
    budget.start();
    let made = 0;
    while (budget.moreWarmup(made)) [made, now] = [made + 1, now + 100];
    // Calls end at 0, 100, …: the 11th (at 1000 ms) is the last.
    assert.equal(made + 1, 11);
    const report = budget.report();
    assert.deepEqual([report.warmup_calls, report.warmup_ms, report.requested_warmup_ms, report.reason], [11, 1000, 1000, null]);

    now = 0;
    const short = new TimingBudget({ budgetMs: 5000, perfTrials: 100, warmupTrials: 2, warmupMs: 1000, now: () => now });
    short.start();
    let calls = 0;
    while (short.moreWarmup(calls)) [calls, now] = [calls + 1, now + 100];
    assert.deepEqual([calls + 1, short.report().warmup_ms, short.report().reason], [6, 500, null], 'a tenth of 5 s ends it at 500 ms');

    const fast = new TimingBudget({ budgetMs: 30_000, perfTrials: 100, warmupTrials: 2, warmupMs: 1000, now: () => 0 });
    fast.start();
    let index = 0;
    while (fast.moreWarmup(index)) index += 1;
    assert.equal(index + 1, WARMUP_CALL_LIMIT);
    assert.equal(warmupCallLimit(0, 1000), 0, 'no warm-up asked for: none by time either');
    assert.equal(warmupCallLimit(10, 0), 10);
  });

  it('says when the budget cut the warm-up by time short, and not when the call limit ended it', () => {
    const plain = { dim: (text: string) => text };
    const summaryWith = (budget: ReturnType<TimingBudget['report']>) =>
      summarizeTiming({
        clock: 'device',
        candidate: { v: 1, type: 'timing', times_ms: repeat(1, 20), samples: [] },
        eager: null,
        compile: null,
        baselineCached: false,
        budget,
      });
    const report = { budget_ms: 5000, requested_calls: 20, timed_calls: 20, requested_warmup: 2, requested_warmup_ms: 1000, reason: null };
    const short = timingNotes(summaryWith({ ...report, warmup_calls: 6, warmup_ms: 500 }), plain).filter((line) => line.includes('warm-up:'));
    assert.deepEqual(short.length, 1);
    assert.match(short[0]!, /6 calls in 500(\.0+)? ms, short of the 1000(\.0+)? ms asked for/);
    const limited = { ...report, warmup_calls: WARMUP_CALL_LIMIT, warmup_ms: 300 };
    const settled = { ...report, warmup_calls: 40, warmup_ms: 1010 };
    for (const budget of [limited, settled]) assert.equal(timingNotes(summaryWith(budget), plain).filter((line) => line.includes('warm-up:')).length, 0);
  });

  it('makes every call asked for when they fit, with no reason', () => {
    const budget = new TimingBudget({ budgetMs: 1000, perfTrials: 3, warmupTrials: 1, now: () => 0 });
    budget.start();
    assert.equal(budget.moreWarmup(0), false);
    assert.deepEqual(
      [0, 1].map((index) => budget.moreTimed(index)),
      [true, true],
    );
    assert.equal(budget.moreTimed(2), false);
    assert.equal(budget.report().reason, null);
  });
});

describe('timed contents', () => {
  it('derives seeds exactly as the worker does', () => {
    assert.equal(derivedSeed(21, 1), 3350528861);
    assert.equal(new Set(Array.from({ length: 1000 }, (_, index) => derivedSeed(21, index))).size, 1000);
  });

  it('gives each timed call its own contents and batch calls contents after them', () => {
    assert.equal(contentCount(3, 10, 100, 1000), 38);
    assert.equal(contentCount(3, 10, 100, 400 * 1024 ** 2), 2, 'past the pool: at least two');
    const seeds = [21, 22, 23];
    const perCall = Array.from({ length: 100 }, (_, index) => timedCallContents(seeds, 10, 38, index));
    assert.equal(new Set(perCall.map((entry) => `${entry.seed}/${entry.inputSeed}`)).size, 100);
    const batches = new BatchContents(seeds, 38);
    const first = Array.from({ length: 6 }, (_, call) => batches.of(call));
    batches.finish(6);
    const second = batches.of(0);
    assert.deepEqual(first[0], { seed: 21, inputSeed: derivedSeed(21, 38) });
    assert.deepEqual(first[4], { seed: 22, inputSeed: derivedSeed(22, 39) });
    assert.deepEqual(second, { seed: 21, inputSeed: derivedSeed(21, 40) });
  });
});

describe('the cross-check (docs/timing.md)', () => {
  const plain = { dim: (text: string) => text };
  const summaryWith = (crossCheck: NonNullable<Parameters<typeof summarizeTiming>[0]['candidate']['cross_check']>) =>
    summarizeTiming({
      clock: 'device',
      candidate: { v: 1, type: 'timing', times_ms: repeat(0.236, 100), samples: [], cross_check: crossCheck },
      eager: { times_ms: repeat(0.32, 100) },
      compile: null,
      baselineCached: false,
    });

  it('compares the median with back-to-back events and with the kernels’ own durations', () => {
    const summary = summaryWith({
      method: 'back-to-back-events',
      times_ms: repeat(0.239, 100),
      kernels: { method: 'kernel-durations', times_ms: repeat(0.228, 20) },
    });
    const check = summary.cross_check!;
    assert.equal(check.agrees, true);
    assert.ok(Math.abs(check.ratio! - 0.236 / 0.239) < 1e-9);
    assert.equal(check.kernels?.agrees, true);
    assert.ok(Math.abs(check.kernels!.ratio! - 0.236 / 0.228) < 1e-9);
    assert.equal(check.kernels?.finding, undefined);
    const notes = timingNotes(summary, plain).filter((line) => line.trim().startsWith('cross-check'));
    assert.equal(notes.length, 2);
    assert.match(notes[1]!, /kernel-durations.*within 10\.0%/);
  });

  it('says which way the kernels’ durations disagree, and why they are missing', () => {
    const gaps = summaryWith({ method: 'back-to-back-events', times_ms: repeat(0.24, 10), kernels: { method: 'kernel-durations', times_ms: repeat(0.1, 20) } });
    assert.equal(gaps.cross_check?.kernels?.agrees, false);
    assert.match(gaps.cross_check!.kernels!.finding!, /gaps between its kernels/);
    const less = summaryWith({ method: 'back-to-back-events', times_ms: repeat(0.24, 10), kernels: { method: 'kernel-durations', times_ms: repeat(0.5, 20) } });
    assert.match(less.cross_check!.kernels!.finding!, /less device time than its own kernels ran for/);
    const missing = summaryWith({
      method: 'back-to-back-events',
      times_ms: repeat(0.24, 10),
      kernels: { method: 'kernel-durations', unavailable: 'no CUPTI' },
    });
    assert.deepEqual(missing.cross_check?.kernels, { method: 'kernel-durations', unavailable: 'no CUPTI' });
    assert.ok(timingNotes(missing, plain).some((line) => line.includes('not measured: no CUPTI')));
  });
});
