import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { REPOSITORY_ROOT } from '../../core/repository-paths.js';
import { pythonExecutable } from '../io/python-executable.js';

/** What `kforge --version` found on this machine; null where a piece is missing. */
export interface InstalledVersions {
  kforge: string;
  node: string;
  python: { executable: string; version: string | null; error?: string };
  /**
   * PyTorch as its installed files say, read without importing it (an import takes 2–4 s):
   * `compile` from the version (2.x has torch.compile), `cuda` the CUDA it was built with. Whether
   * it can use a GPU here is `kforge doctor`'s to say.
   */
  torch: { version: string; compile: boolean; cuda: string | null } | null;
  /** The NVIDIA driver and the CUDA version it supports, from nvidia-smi; null without one. */
  driver: { version: string; cuda: string | null } | null;
}

/**
 * The worker's Python and its PyTorch, without importing torch: `find_spec` locates the package,
 * its `version.py` (plain assignments, parsed, not run) gives `__version__` and `cuda`, and the
 * installed distribution's metadata the version where that file says nothing.
 */
const PYTHON_PROBE = [
  'import ast, importlib.util, json, os, sys',
  'info = {"python": sys.version.split()[0], "torch": None}',
  'try:',
  '    spec = importlib.util.find_spec("torch")',
  'except Exception:',
  '    spec = None',
  'if spec is not None and spec.origin:',
  '    fields = {}',
  '    try:',
  '        with open(os.path.join(os.path.dirname(spec.origin), "version.py"), encoding="utf-8") as source:',
  '            for node in ast.parse(source.read()).body:',
  '                targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []',
  '                for target in targets:',
  '                    if isinstance(target, ast.Name) and isinstance(node.value, ast.Constant):',
  '                        fields[target.id] = node.value.value',
  '    except (OSError, SyntaxError, ValueError):',
  '        pass',
  '    version = fields.get("__version__")',
  '    if not isinstance(version, str):',
  '        try:',
  '            import importlib.metadata',
  '            version = importlib.metadata.version("torch")',
  '        except Exception:',
  '            version = None',
  '    cuda = fields.get("cuda")',
  '    info["torch"] = {"version": version or "unknown", "cuda": cuda if isinstance(cuda, str) else None}',
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
  const found = JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as { python?: string; torch?: { version: string; cuda: string | null } | null };
  const torch = found.torch ? { ...found.torch, compile: Number(/^(\d+)\./.exec(found.torch.version)?.[1] ?? 0) >= 2 } : null;
  return { python: { executable, version: found.python ?? null }, torch };
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
 * (the worker's Python as `kforge eval` picks it). Probes run in parallel and import no torch:
 * about 0.1–0.2 s, most of it Python's start and nvidia-smi.
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
  const builtWith = torch?.cuda ? `PyTorch built with CUDA ${torch.cuda}` : 'PyTorch built without CUDA';
  const driverPart = driver ? `NVIDIA driver ${driver.version}${driver.cuda ? ` (CUDA ${driver.cuda})` : ''}` : 'no NVIDIA driver found';
  lines.push(`CUDA: ${torch ? `${builtWith}; ` : ''}${driverPart}`);
  return `${lines.join('\n')}\n`;
}
