import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { StoreReferenceError } from '../../../src/store/errors/store-reference-error.js';
import { StoreValidationError } from '../../../src/store/errors/store-validation-error.js';
import { seedRun, useFreshStore, type OpenEmptyStore } from './conformance-setup.js';

/**
 * The RunStore conformance suite's part on ideas, run events and people's actions (run-store-conformance.ts runs every part).
 *
 * Longer than convention 4's 60 lines: a suite is a list of tests, one `it` each, read top to
 * bottom; a function per test would only move them apart.
 */
export function describeIdeasEventsActions(open: OpenEmptyStore): void {
  describe('ideas', () => {
    const handle = useFreshStore(open);

    it('creates, reads, updates and deletes ideas; candidates keep the label of a deleted idea', async () => {
      const { run, relu, softmax } = await seedRun(handle.store);
      const at = handle.peekNow();
      const idea = await handle.store.addIdea({ runId: run.id, problemHash: relu.hash, round: 1, label: 'smem-tiling', text: 'Tile through shared memory.' });
      assert.deepEqual(idea, {
        id: idea.id,
        runId: run.id,
        problemHash: relu.hash,
        round: 1,
        label: 'smem-tiling',
        text: 'Tile through shared memory.',
        status: 'active',
        createdAt: at,
        updatedAt: at,
      });
      const other = await handle.store.addIdea({
        runId: run.id,
        problemHash: softmax.hash,
        round: 1,
        label: 'online',
        text: 'Online softmax.',
        status: 'pinned',
      });
      assert.deepEqual(await handle.store.getIdea(idea.id), idea);
      const updated = await handle.store.updateIdea(idea.id, { text: 'Tile 32x32.', status: 'dropped' });
      assert.deepEqual([updated.text, updated.status, updated.label, updated.createdAt], ['Tile 32x32.', 'dropped', 'smem-tiling', at]);
      assert.notEqual(updated.updatedAt, at);
      assert.deepEqual(
        (await handle.store.listIdeas(run.id)).map((item) => item.id),
        [idea.id, other.id],
      );
      assert.deepEqual(
        (await handle.store.listIdeas(run.id, { status: 'pinned' })).map((item) => item.id),
        [other.id],
      );
      assert.deepEqual(
        (await handle.store.listIdeas(run.id, { problemHash: relu.hash })).map((item) => item.id),
        [idea.id],
      );

      const candidate = await handle.store.addCandidate({ runId: run.id, problemHash: relu.hash, round: 1, source: 'x', origin: 'model', ideaId: idea.id });
      await handle.store.deleteIdea(idea.id);
      assert.equal(await handle.store.getIdea(idea.id), undefined);
      const kept = await handle.store.getCandidate(candidate.id);
      assert.deepEqual([kept?.ideaId, kept?.ideaLabel], [null, 'smem-tiling']);
      await assert.rejects(handle.store.deleteIdea(idea.id), StoreReferenceError);
      await assert.rejects(handle.store.updateIdea(idea.id, { status: 'pinned' }), StoreReferenceError);
      await assert.rejects(
        handle.store.addCandidate({ runId: run.id, problemHash: relu.hash, round: 1, source: 'y', origin: 'model', ideaId: other.id }),
        StoreValidationError,
      );
    });
  });

  describe('events', () => {
    const handle = useFreshStore(open);

    it('round-trips events and pages through them with an after-id cursor', async () => {
      const { run, relu } = await seedRun(handle.store);
      const at = handle.peekNow();
      const stalled = await handle.store.recordEvent({ runId: run.id, problemHash: relu.hash, type: 'problem-stalled', payload: { rounds: 3, best: 1.5 } });
      assert.deepEqual(stalled, {
        id: stalled.id,
        runId: run.id,
        problemHash: relu.hash,
        type: 'problem-stalled',
        payload: { rounds: 3, best: 1.5 },
        createdAt: at,
      });
      const all = await handle.store.listEvents(run.id);
      assert.deepEqual(
        all.map((event) => event.type),
        ['run-created', 'problem-stalled'],
      );
      const cursor = all.at(-1)!.id;
      assert.deepEqual(await handle.store.listEvents(run.id, { afterId: cursor }), []);
      const later = [
        await handle.store.recordEvent({ runId: run.id, type: 'round-started', payload: { round: 1 } }),
        await handle.store.recordEvent({ runId: run.id, problemHash: relu.hash, type: 'round-started' }),
      ];
      const fresh = await handle.store.listEvents(run.id, { afterId: cursor });
      assert.deepEqual(fresh, later);
      assert.ok(later[0]!.id > cursor && later[1]!.id > later[0]!.id);
      assert.deepEqual(later[1]!.payload, {});
      assert.deepEqual(
        (await handle.store.listEvents(run.id, { afterId: cursor, limit: 1 })).map((event) => event.id),
        [later[0]!.id],
      );
      assert.deepEqual(
        (await handle.store.listEvents(run.id, { problemHash: relu.hash })).map((event) => event.type),
        ['problem-stalled', 'round-started'],
      );
      assert.deepEqual(
        (await handle.store.listEvents(run.id, { types: ['problem-stalled'] })).map((event) => event.id),
        [stalled.id],
      );
      assert.deepEqual(await handle.store.listEvents(run.id, { types: [] }), []);
    });

    it('refuses event types that are not noun-verb and events of unknown runs', async () => {
      const { run } = await seedRun(handle.store);
      await assert.rejects(
        handle.store.recordEvent({ runId: run.id, type: 'Stalled' }),
        (error: unknown) => error instanceof StoreValidationError && error.field === 'event.type',
      );
      await assert.rejects(handle.store.recordEvent({ runId: 'nope', type: 'problem-stalled' }), StoreReferenceError);
    });
  });

  describe('actions', () => {
    const handle = useFreshStore(open);

    it('records hints, idea pins and drops, accepts and stops, and lists them with a cursor', async () => {
      const { run, relu, softmax } = await seedRun(handle.store);
      const idea = await handle.store.addIdea({ runId: run.id, problemHash: relu.hash, round: 0, label: 'unroll', text: 'Unroll by 4.' });
      const candidate = await handle.store.addCandidate({ runId: run.id, problemHash: softmax.hash, round: 0, source: 'k', origin: 'model' });
      const at = handle.peekNow();
      const hint = await handle.store.recordAction({ runId: run.id, type: 'hint', problemHash: relu.hash, note: 'Try float4 loads.' });
      assert.deepEqual(hint, {
        id: hint.id,
        runId: run.id,
        problemHash: relu.hash,
        type: 'hint',
        candidateId: null,
        ideaId: null,
        note: 'Try float4 loads.',
        createdAt: at,
      });
      const everywhere = await handle.store.recordAction({ runId: run.id, type: 'hint', note: 'Keep fp32 accumulators.' });
      const pin = await handle.store.recordAction({ runId: run.id, type: 'pin-idea', ideaId: idea.id });
      assert.equal(pin.problemHash, relu.hash);
      assert.equal((await handle.store.getIdea(idea.id))?.status, 'pinned');
      await handle.store.recordAction({ runId: run.id, type: 'drop-idea', ideaId: idea.id, note: 'slower' });
      assert.equal((await handle.store.getIdea(idea.id))?.status, 'dropped');
      const accept = await handle.store.recordAction({ runId: run.id, type: 'accept', candidateId: candidate.id, note: 'ship it' });
      assert.deepEqual([accept.problemHash, accept.candidateId, accept.note], [softmax.hash, candidate.id, 'ship it']);
      const stop = await handle.store.recordAction({ runId: run.id, type: 'stop' });
      assert.equal(stop.problemHash, null);

      assert.deepEqual(
        (await handle.store.listHints(run.id, relu.hash)).map((action) => action.id),
        [hint.id, everywhere.id],
      );
      assert.deepEqual(
        (await handle.store.listHints(run.id, softmax.hash)).map((action) => action.id),
        [everywhere.id],
      );
      assert.deepEqual(
        (await handle.store.listActions(run.id, { afterId: accept.id })).map((action) => action.id),
        [stop.id],
      );
      assert.deepEqual(
        (await handle.store.listActions(run.id, { types: ['pin-idea', 'drop-idea'] })).map((action) => action.type),
        ['pin-idea', 'drop-idea'],
      );
      assert.deepEqual(
        (await handle.store.listActions(run.id, { problemHash: softmax.hash })).map((action) => action.id),
        [accept.id],
      );
      const recorded = await handle.store.listEvents(run.id, { types: ['action-recorded'] });
      assert.deepEqual(
        recorded.map((event) => event.payload.type),
        ['hint', 'hint', 'pin-idea', 'drop-idea', 'accept', 'stop'],
      );
    });

    it('refuses actions missing what their type needs or pointing into another run, changing nothing', async () => {
      const { run, relu } = await seedRun(handle.store);
      const other = (await seedRun(handle.store, { id: 'other' })).run;
      const foreignIdea = await handle.store.addIdea({ runId: other.id, problemHash: relu.hash, round: 0, label: 'x', text: 'x' });
      const before = await handle.store.getRun(run.id);
      await assert.rejects(
        handle.store.recordAction({ runId: run.id, type: 'hint' }),
        (error: unknown) => error instanceof StoreValidationError && error.field === 'action.note',
      );
      await assert.rejects(
        handle.store.recordAction({ runId: run.id, type: 'accept' }),
        (error: unknown) => error instanceof StoreValidationError && error.field === 'action.candidateId',
      );
      await assert.rejects(handle.store.recordAction({ runId: run.id, type: 'drop-idea', ideaId: foreignIdea.id }), StoreReferenceError);
      await assert.rejects(handle.store.recordAction({ runId: 'nope', type: 'stop' }), StoreReferenceError);
      assert.equal((await handle.store.getIdea(foreignIdea.id))?.status, 'active');
      assert.deepEqual(await handle.store.listActions(run.id), []);
      assert.deepEqual(await handle.store.getRun(run.id), before, 'a refused write leaves the run untouched');
    });
  });
}
