import { access } from 'node:fs/promises';
import { constants } from 'node:fs';
import type { EvaluationResult } from '../../core/verdict.js';
import type { EvaluationSettings } from './evaluation-settings.js';

/** An `invalid_input` result when the problem or the candidate file cannot be read; null when both can. */
export async function unreadableInput(settings: EvaluationSettings): Promise<EvaluationResult | null> {
  for (const [what, file, check] of [
    ['problem', settings.problemPath, 'problem-load'],
    ['candidate', settings.candidatePath, 'candidate-load'],
  ] as const) {
    try {
      await access(file, constants.R_OK);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      const why = code === 'ENOENT' ? 'does not exist' : `cannot be read (${code})`;
      return {
        verdict: 'invalid_input',
        reasons: [{ check, message: `the ${what} file ${file} ${why}; pass the path of a readable Python file` }],
        problem: settings.problemPath,
        candidate: settings.candidatePath,
        backend: settings.backend,
        precision: settings.precision,
        preset: settings.preset,
        diagnostics: { stdout: '', stderr: '' },
        environment: null,
      };
    }
  }
  return null;
}
