import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { REPOSITORY_ROOT } from '../core/repository-paths.js';
import { pythonExecutable } from './python-executable.js';

/** What `kforge --version` found on this machine; null where a piece is missing. */
export interface InstalledVersions {
  kforge: string;
  node: string;
  python: { executable: string; version: string | null; error?: string };
  torch: { version: string; compile: boolean; cuda: string | null; cudaAvailable: boolean } | null;
  /** The NVIDIA driver and the CUDA version it supports, from nvidia-smi; null without one. */
  driver: { version: string; cuda: string | null } | null;
}

const PYTHON_PROBE = [
  'import json, sys',
  'info = {"python": sys.version.split()[0]}',
  'try:',
  '    import torch',
  '    info["torch"] = {"version": torch.__version__, "compile": hasattr(torch, "compile"), "cuda": torch.version.cuda, "cudaAvailable": bool(torch.cuda.is_available())}',
  'except Exception:',
  '    info["torch"] = None',
  'print(json.dumps(info))',
].join('\n');

/** A command's standard output, or null when it is missing, fails or takes longer than `timeoutMs`. */
function outputOf(command: string, args: readonly string[], environment: NodeJS.ProcessEnv, timeoutMs: number): Promise<string | null> {
  return new Promise((resolve) => {
    execFile(command, args, { env: environment, timeout: timeoutMs, encoding: 'utf8' }, (error, stdout) => resolve(error ? null : stdout));
  });
}

async function kforgeVersion(): Promise<string> {
  const manifest = JSON.parse(await readFile(path.join(REPOSITORY_ROOT, 'package.json'), 'utf8')) as { version?: string };
  return manifest.version ?? 'unknown';
}

async function pythonAndTorch(environment: NodeJS.ProcessEnv): Promise<Pick<InstalledVersions, 'python' | 'torch'>> {
  const executable = pythonExecutable(environment);
  const stdout = await outputOf(executable, ['-c', PYTHON_PROBE], environment, 60_000);
  if (stdout === null) return { python: { executable, version: null, error: 'did not run' }, torch: null };
  const found = JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as { python?: string; torch?: InstalledVersions['torch'] };
  return { python: { executable, version: found.python ?? null }, torch: found.torch ?? null };
}

async function nvidiaDriver(environment: NodeJS.ProcessEnv): Promise<InstalledVersions['driver']> {
  const stdout = await outputOf('nvidia-smi', [], environment, 10_000);
  if (stdout === null) return null;
  const version = /Driver Version:\s*([\d.]+)/.exec(stdout)?.[1];
  if (!version) return null;
  return { version, cuda: /CUDA Version:\s*([\d.]+)/.exec(stdout)?.[1] ?? null };
}

/**
 * The versions of kforge, Node.js, Python, PyTorch and CUDA this process would evaluate with
 * (the worker's Python as `kforge eval` picks it). Probes run in parallel; about 1–2 s, the time
 * Python takes to import torch.
 */
export async function findInstalledVersions(environment: NodeJS.ProcessEnv): Promise<InstalledVersions> {
  const [kforge, pythonSide, driver] = await Promise.all([kforgeVersion(), pythonAndTorch(environment), nvidiaDriver(environment)]);
  return { kforge, node: process.versions.node, ...pythonSide, driver };
}

/** `kforge --version`'s lines: one piece of software a line, saying what is missing. */
export function formatInstalledVersions(versions: InstalledVersions): string {
  const { python, torch, driver } = versions;
  const lines = [`kforge ${versions.kforge}`, `Node.js ${versions.node}`];
  lines.push(
    python.version
      ? `Python ${python.version} (${python.executable})`
      : `Python: \`${python.executable}\` did not run; set KFORGE_PYTHON to a Python with PyTorch`,
  );
  if (python.version)
    lines.push(
      torch
        ? `PyTorch ${torch.version}${torch.compile ? '' : ' (no torch.compile: baselines are eager only)'}`
        : `PyTorch: not installed for ${python.executable} (run \`kforge doctor\`)`,
    );
  const builtWith = torch?.cuda ? `PyTorch built with CUDA ${torch.cuda}${torch.cudaAvailable ? '' : ' (no GPU usable)'}` : 'PyTorch built without CUDA';
  const driverPart = driver ? `NVIDIA driver ${driver.version}${driver.cuda ? ` (CUDA ${driver.cuda})` : ''}` : 'no NVIDIA driver found';
  lines.push(`CUDA: ${torch ? `${builtWith}; ` : ''}${driverPart}`);
  return `${lines.join('\n')}\n`;
}
