import { spawnSync } from 'node:child_process';

const PYTHON_CANDIDATES = ['python3', '/usr/bin/python3'] as const;
const resolvedPythons = new Map<string, string>();

/**
 * The Python the worker runs under: `KFORGE_PYTHON` if set; else the first of `python3` on PATH and
 * `/usr/bin/python3` that can find torch (a pyenv or venv `python3` often lacks the Debian
 * PyTorch); else `python3`, so that `kforge doctor` can say what is missing. The probe imports
 * nothing (`importlib.util.find_spec`) and is done once per process.
 */
export function pythonExecutable(environment: NodeJS.ProcessEnv): string {
  const chosen = environment.KFORGE_PYTHON?.trim();
  if (chosen) return chosen;
  const key = environment.PATH ?? '';
  const cached = resolvedPythons.get(key);
  if (cached) return cached;
  const found = PYTHON_CANDIDATES.find((candidate) => canFindTorch(candidate, environment)) ?? 'python3';
  resolvedPythons.set(key, found);
  return found;
}

function canFindTorch(python: string, environment: NodeJS.ProcessEnv): boolean {
  const probe = spawnSync(python, ['-c', 'import importlib.util, sys; sys.exit(0 if importlib.util.find_spec("torch") else 1)'], {
    env: environment,
    stdio: 'ignore',
    timeout: 20_000,
  });
  return probe.status === 0;
}
