import { spawnSync } from 'node:child_process';

/** The Python with PyTorch that end-to-end tests run the real worker with: `KFORGE_PYTHON`, else Debian's. */
export const TORCH_PYTHON = process.env.KFORGE_PYTHON ?? '/usr/bin/python3';

const probed = new Map<string, string | false>();

/**
 * Why `python` cannot run the worker here (it cannot import torch), or false when it can: a test's
 * `skip` value, so a machine without PyTorch skips the test saying what to set. Probed once a process.
 */
export function torchUnavailable(python: string = TORCH_PYTHON): string | false {
  const known = probed.get(python);
  if (known !== undefined) return known;
  const probe = spawnSync(python, ['-c', 'import torch'], { encoding: 'utf8', timeout: 120_000 });
  const cause = (probe.stderr || probe.error?.message || '').trim().split('\n').at(-1) || `exit status ${probe.status}`;
  const reason = probe.status === 0 ? false : `${python} cannot import torch (${cause}); set KFORGE_PYTHON to a Python with PyTorch to run this test`;
  probed.set(python, reason);
  return reason;
}

/** Why C++ candidates cannot be built here (no `c++` on the path), or false when they can. */
export function compilerUnavailable(): string | false {
  return spawnSync('c++', ['--version']).status === 0 ? false : 'no C++ compiler (c++) to build the extension with';
}
