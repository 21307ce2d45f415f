import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { optimizePlanSchema } from '../../agent/run/optimize-plan.js';
import type { ProblemAudit } from '../../eval/problem/problem-audit.js';
import type { ProblemAuditorOptions } from '../../eval/problem/problem-auditor.js';
import { resolveCliIo } from '../io/cli-io.js';
import { DRY_RUN_AUDIT_LIMIT_MS, runOptimizeDryRun } from './optimize-dry-run.js';

/** A plan of `count` problems (`/p/p0.py` …) on the cpu backend. */
function plan(count: number) {
  return optimizePlanSchema.parse({
    version: 1,
    problems: Array.from({ length: count }, (_, index) => `/p/p${index}.py`),
    strategy: 'refine',
    perProblem: { maxCandidates: 1 },
    total: {},
    evaluation: { backend: 'cpu', precision: 'fp32', tolerance: 'kernelbench' },
    stall: { patience: 3, policy: 'continue' },
    model: { provider: 'files' },
    outDir: '/out',
    candidatesDir: '/candidates',
  });
}

function io() {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { stdout, stderr, io: resolveCliIo({ stdout: { write: (text) => stdout.push(text) }, stderr: { write: (text) => stderr.push(text) }, cwd: '/' }) };
}

const AUDITOR = { python: 'python3', workerDirectory: '/w', environment: {} };
const clean = (file: string): ProblemAudit => ({ problemPath: file, findings: [], durationMs: 5, audit: null });

describe('kforge optimize --dry-run: the audits', () => {
  it('run at once up to the cores given, each within a minute, and the table keeps the problems order', async () => {
    let running = 0;
    let most = 0;
    const limits: number[] = [];
    const { io: cli, stdout } = io();
    const status = await runOptimizeDryRun(cli, plan(5), {
      auditor: AUDITOR,
      json: true,
      concurrency: 2,
      auditProblem: async (file: string, options: ProblemAuditorOptions) => {
        running += 1;
        most = Math.max(most, running);
        limits.push(options.timeoutMs ?? 0);
        // The later problems finish first: the table must still follow the plan.
        await new Promise((resolve) => setTimeout(resolve, 100 - 15 * Number(file.slice(4, 5))));
        running -= 1;
        return clean(file);
      },
    });
    assert.equal(status, 0);
    assert.equal(most, 2, 'two audits at once, never more');
    assert.deepEqual(limits, Array(5).fill(DRY_RUN_AUDIT_LIMIT_MS));
    const rows = (JSON.parse(stdout.join('')) as { problems: Array<{ problem: string }> }).problems.map((row) => row.problem);
    assert.deepEqual(rows, ['/p/p0.py', '/p/p1.py', '/p/p2.py', '/p/p3.py', '/p/p4.py']);
  });

  it('end within the budget: an audit gets what is left of it, and one that cannot start is listed as not audited', async () => {
    let clockMs = 0;
    const limits: number[] = [];
    const { io: cli, stdout } = io();
    const status = await runOptimizeDryRun(cli, plan(3), {
      auditor: AUDITOR,
      json: false,
      concurrency: 1,
      budgetMs: 100_000,
      now: () => clockMs,
      auditProblem: async (file: string, options: ProblemAuditorOptions) => {
        limits.push(options.timeoutMs ?? 0);
        clockMs += 46_000;
        return clean(file);
      },
    });
    assert.equal(status, 0, 'a problem not audited is no error of the problem');
    // 100 s: the first audit gets its minute, the second the 54 s left, the third would start with 8 s.
    assert.deepEqual(limits, [60_000, 54_000]);
    const text = stdout.join('');
    assert.match(text, /\naudits: 1 at once, each within 60 s, all within 100 s\n$/);
    assert.match(
      text,
      /p2\.py\s+—\s+—\s+warning: not-audited — not audited: the dry run's 100 s were spent on the others \(audit it alone: kforge problems audit PROBLEM\)/,
    );
  });
});
