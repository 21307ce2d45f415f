/**
 * The suite level a problem belongs to, from its path (`problems/level2/01_gemm.py`,
 * `KernelBench/level1/19_ReLU.py`) or else its name (`level3_01_mlp`): `level1`, `level2`…;
 * `other` when neither names a level.
 *
 * @example problemLevel({ path: '/x/KernelBench/level1/19_ReLU.py', name: '19_ReLU' }) // 'level1'
 */
export function problemLevel(problem: { path: string | null; name: string }): string {
  for (const text of [problem.path ?? '', problem.name]) {
    const match = /level[ _-]?(\d+)/i.exec(text);
    if (match) return `level${Number(match[1])}`;
  }
  return 'other';
}

/** Levels in reading order: `level1`, `level2`, …, `level10`, then `other`. */
export function compareLevels(a: string, b: string): number {
  const rank = (level: string): number => (level === 'other' ? Number.MAX_SAFE_INTEGER : Number(level.replace('level', '')));
  return rank(a) - rank(b);
}
