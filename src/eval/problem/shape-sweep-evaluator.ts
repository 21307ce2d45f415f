import type { EvaluationResult } from '../../core/verdict.js';
import { deviceSlotOf, type EvaluateOptions, type Evaluation, type EvaluationRequest, type Evaluator } from '../evaluator.js';
import { shapeLabel, type ProblemFolder } from './problem-folder.js';
import type { ProblemFolderReader } from './problem-folder-reader.js';
import { combineShapeResults, SWEEP_ENDING_VERDICTS, type EvaluatedShape } from './shape-sweep-result.js';

/** The check of a `shape` that the problem does not have (a single file, or an index past `SHAPES`). */
export const SHAPE_CHECK = 'problem-shape';

export interface ShapeSweepEvaluatorOptions {
  /** Evaluates each shape (a PipelinedEvaluator, a JobQueueEvaluator). */
  inner: Evaluator;
  /** Tells a problem folder from a single file and reads it (`createProblemFolderReader`). */
  readFolder: ProblemFolderReader;
}

/**
 * Evaluates KernelBench-Hard problem folders (docs/problems.md): for a request whose problem is a
 * folder (or its reference.py), one evaluation of reference.py per shape of shapes.py, with that
 * shape's module constants as overrides (the request's own `overrides`, `--set`, win), one after
 * another so that the candidate's build is made once and reused; combined into one result by
 * `combineShapeResults`. A shape that ends in `compile_error` or `invalid_input` ends the sweep
 * (every shape would end so). `request.shape` picks one shape. A single-file problem goes to the
 * inner evaluator unchanged; a folder that cannot be used is an `invalid_input` result (check
 * `problem-load`, the worker's message) without evaluating.
 */
export class ShapeSweepEvaluator implements Evaluator {
  readonly #inner: Evaluator;
  readonly #readFolder: ProblemFolderReader;

  constructor(options: ShapeSweepEvaluatorOptions) {
    this.#inner = options.inner;
    this.#readFolder = options.readFolder;
  }

  async evaluate(request: EvaluationRequest, options: EvaluateOptions = {}): Promise<Evaluation> {
    const { shape, ...rest } = request;
    const reading = await this.#readFolder(request.problemPath);
    if (reading.kind === 'file') {
      if (shape !== undefined) {
        return unevaluated(
          request,
          SHAPE_CHECK,
          `a shape (--shape ${shape}) was asked of ${request.problemPath}, a single-file problem; shapes belong to problem folders (reference.py with shapes.py)`,
        );
      }
      return this.#inner.evaluate(rest, options);
    }
    if (reading.kind === 'invalid') return unevaluated(request, reading.check, reading.message);
    const folder = reading.folder;
    const base: EvaluationRequest = { ...rest, problemPath: folder.reference };
    if (folder.shapes.length === 0) {
      if (shape !== undefined) return unevaluated(request, SHAPE_CHECK, `--shape ${shape}: the problem folder ${folder.folder} has no shapes.py`);
      return this.#inner.evaluate(base, options);
    }
    if (shape !== undefined && !(Number.isInteger(shape) && shape >= 0 && shape < folder.shapes.length)) {
      return unevaluated(request, SHAPE_CHECK, shapeOutOfRange(shape, folder));
    }
    return this.#sweep(base, shape === undefined ? folder.shapes : [folder.shapes[shape]!], options);
  }

  async #sweep(base: EvaluationRequest, shapes: ProblemFolder['shapes'], options: EvaluateOptions): Promise<Evaluation> {
    const evaluated: EvaluatedShape[] = [];
    const usage = { device: deviceSlotOf(base), waitedMs: 0, heldMs: 0 };
    for (const [position, shape] of shapes.entries()) {
      options.onShape?.({ index: shape.index, position: position + 1, total: shapes.length, label: shapeLabel(shape) });
      const overrides = { ...shape.overrides, ...base.overrides };
      const { overrides: _ignored, ...request } = base;
      const evaluation = await this.#inner.evaluate(Object.keys(overrides).length > 0 ? { ...request, overrides } : request, options);
      evaluated.push({ shape, overrides, result: evaluation.result });
      if (position === 0) usage.device = evaluation.usage.device;
      usage.waitedMs += evaluation.usage.waitedMs;
      usage.heldMs += evaluation.usage.heldMs;
      if (SWEEP_ENDING_VERDICTS.has(evaluation.result.verdict)) break;
    }
    return { result: combineShapeResults(evaluated), usage };
  }

  async close(): Promise<void> {
    await this.#inner.close?.();
  }
}

/** `--shape 7`: the problem folder 01_fp8_gemm has 4 shapes (0 to 3). */
export function shapeOutOfRange(shape: number, folder: Pick<ProblemFolder, 'folder' | 'shapes'>): string {
  const count = folder.shapes.length;
  return `--shape ${shape}: the problem folder ${folder.folder} has ${count} shape${count === 1 ? '' : 's'} (${count === 1 ? '0' : `0 to ${count - 1}`})`;
}

/** An `invalid_input` evaluation that never ran: a problem folder or a shape the request cannot have. */
function unevaluated(request: EvaluationRequest, check: string, message: string): Evaluation {
  const result: EvaluationResult = {
    verdict: 'invalid_input',
    reasons: [{ check, message }],
    problem: request.problemPath,
    candidate: request.candidatePath,
    backend: request.backend,
    precision: request.precision,
    ...(request.preset ? { preset: request.preset } : {}),
    diagnostics: { stdout: '', stderr: '' },
    environment: null,
  };
  return { result, usage: { device: deviceSlotOf(request), waitedMs: 0, heldMs: 0 } };
}
