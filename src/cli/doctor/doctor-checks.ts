import { existsSync } from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { z } from 'zod';
import type { Backend } from '../../core/verdict.js';
import type { DoctorCheck, ToolRun, ToolRunner } from './doctor-check.js';
import { backendChecks, backendPackages, runBackendTools, runnableBackends } from './backend-checks.js';
import { backendsRequiring } from '../../backends/registry.js';
import { isolationCheck } from './doctor-isolation.js';
import { defaultBaselineCacheDirectory } from '../../eval/cache/baseline-cache.js';
import { sandboxPolicy } from '../../eval/process/worker-sandbox.js';

export type { DoctorCheck, ToolRun, ToolRunner } from './doctor-check.js';

export interface DoctorReport {
  python: string;
  checks: DoctorCheck[];
  /** Which backends can run here. */
  backends: Record<Backend, boolean>;
}

/** The one line that installs everything the cpu backend needs on Debian or Ubuntu. */
export const DEBIAN_INSTALL_LINE = 'apt-get install -y python3-torch libtorch-dev pybind11-dev python3-numpy python3-pytest ninja-build g++ python3-dev';

const PROBE = `
import json, os, sys, sysconfig
info = {"python": sys.version.split()[0], "executable": sys.executable}
include = sysconfig.get_paths().get("include")
info["python_headers"] = bool(include and os.path.exists(os.path.join(include, "Python.h")))
try:
    import torch
    info["torch"] = torch.__version__
    info["torch_compile"] = hasattr(torch, "compile")
    info["cuda_available"] = bool(torch.cuda.is_available())
    info["torch_cuda"] = torch.version.cuda
    from torch.utils.cpp_extension import include_paths
    roots = list(include_paths()) + [include or "", "/usr/include", "/usr/local/include"]
    info["torch_headers"] = any(os.path.exists(os.path.join(root, "torch", "extension.h")) for root in roots)
    info["pybind11_headers"] = any(os.path.exists(os.path.join(root, "pybind11", "pybind11.h")) for root in roots)
except Exception as error:
    info["torch_error"] = type(error).__name__ + ": " + str(error)
try:
    import numpy
    info["numpy"] = numpy.__version__
except Exception:
    info["numpy"] = None
info["packages"] = {}
for name in sys.argv[1:]:
    try:
        from importlib.metadata import version
        info["packages"][name] = version(name)
    except Exception:
        info["packages"][name] = None
print(json.dumps(info))
`;

const probeSchema = z.object({
  python: z.string(),
  executable: z.string(),
  python_headers: z.boolean(),
  torch: z.string().optional(),
  torch_compile: z.boolean().optional(),
  cuda_available: z.boolean().optional(),
  torch_cuda: z.string().nullable().optional(),
  torch_error: z.string().optional(),
  torch_headers: z.boolean().optional(),
  pybind11_headers: z.boolean().optional(),
  numpy: z.string().nullable(),
  /** The versions of the backends' own Python distributions (null: not installed), named after the probe's arguments. */
  packages: z.record(z.string(), z.string().nullable()).default({}),
});
type Probe = z.infer<typeof probeSchema>;

/** Runs a command with execa, never throwing. */
export const execaToolRunner: ToolRunner = async (command, args, timeoutMs) => {
  const result = await execa(command, [...args], { reject: false, timeout: timeoutMs, stdin: 'ignore' });
  return { ok: !result.failed, stdout: String(result.stdout ?? ''), stderr: String(result.stderr ?? '') };
};

export interface DoctorOptions {
  python: string;
  workerDirectory: string;
  run?: ToolRunner;
  /** The environment `KFORGE_SANDBOX` is read from (the isolation line); default `process.env`. */
  environment?: NodeJS.ProcessEnv;
}

/** Checks everything the evaluator needs and says, for each missing piece, what installs it. */
export async function runDoctorChecks(options: DoctorOptions): Promise<DoctorReport> {
  const run = options.run ?? execaToolRunner;
  const [probeRun, backendAnswers, gxx, ninja] = await Promise.all([
    run(options.python, ['-c', PROBE, ...backendPackages().map((check) => check.distribution)], 120_000),
    runBackendTools(run),
    run('g++', ['--version'], 15_000),
    run('ninja', ['--version'], 15_000),
  ]);
  const probe = parseProbe(probeRun);
  const checks: DoctorCheck[] = [];
  checks.push({
    id: 'python',
    label: 'Python',
    ok: probe !== null,
    detail: probe
      ? `${options.python} is Python ${probe.python} (${probe.executable})`
      : `\`${options.python}\` did not run: ${firstLine(probeRun.stderr) || 'not found'}`,
    fix: 'apt-get install -y python3, or set KFORGE_PYTHON to a Python 3.9+ executable',
    requiredFor: backendsRequiring('python'),
  });
  if (probe) checks.push(...(await torchChecks(probe, options.python, run, options.environment ?? process.env)));
  checks.push(
    {
      id: 'python-headers',
      label: 'Python headers',
      ok: probe?.python_headers === true,
      detail: probe?.python_headers ? 'Python.h found' : 'Python.h is missing: C++ extensions cannot build',
      fix: 'apt-get install -y python3-dev',
      requiredFor: backendsRequiring('python-headers'),
    },
    tool('g++', 'g++', gxx, firstLine(gxx.stdout), 'apt-get install -y g++'),
    tool('ninja', 'ninja', ninja, ninja.stdout.trim(), 'apt-get install -y ninja-build'),
    {
      id: 'worker',
      label: 'kforge worker',
      ok: existsSync(path.join(options.workerDirectory, 'kforge_worker', '__main__.py')),
      detail: path.join(options.workerDirectory, 'kforge_worker'),
      fix: 'run kforge from a complete checkout, or set KFORGE_WORKER_DIR to the folder holding kforge_worker/',
      requiredFor: backendsRequiring('worker'),
    },
    ...backendChecks(backendAnswers, probe?.packages ?? null),
  );
  checks.push(await isolationCheck({ python: options.python, environment: options.environment ?? process.env, run }));
  const backends = runnableBackends(checks);
  return { python: options.python, checks: checks.map(withoutFixWhenOk), backends };
}

/** Where the reference worker keeps torch.compile's caches, or null (fresh per worker; or a `KFORGE_SANDBOX` value the isolation line reports). */
function compileCacheOf(environment: NodeJS.ProcessEnv): string | null {
  try {
    return sandboxPolicy(environment, path.dirname(defaultBaselineCacheDirectory(environment))).compileCache ?? null;
  } catch {
    return null;
  }
}

async function torchChecks(probe: Probe, python: string, run: ToolRunner, environment: NodeJS.ProcessEnv): Promise<DoctorCheck[]> {
  const compileCache = compileCacheOf(environment);
  if (!probe.torch) {
    const fix = await alternativePython(python, run);
    return [
      {
        id: 'torch',
        label: 'PyTorch',
        ok: false,
        detail: `not importable by ${python}: ${probe.torch_error ?? 'unknown error'}`,
        fix: fix ?? `${DEBIAN_INSTALL_LINE} (or: ${python} -m pip install torch numpy)`,
        requiredFor: backendsRequiring('torch'),
      },
    ];
  }
  return [
    { id: 'torch', label: 'PyTorch', ok: true, detail: `torch ${probe.torch}`, requiredFor: backendsRequiring('torch') },
    {
      id: 'numpy',
      label: 'numpy',
      ok: Boolean(probe.numpy),
      detail: probe.numpy ? `numpy ${probe.numpy}` : 'not installed',
      fix: 'apt-get install -y python3-numpy',
      requiredFor: backendsRequiring('numpy'),
    },
    {
      id: 'torch-headers',
      label: 'PyTorch C++ headers',
      ok: probe.torch_headers !== false && probe.pybind11_headers !== false,
      detail:
        probe.torch_headers === false
          ? 'torch/extension.h is missing: load_inline cannot build C++ or CUDA candidates'
          : probe.pybind11_headers === false
            ? 'pybind11/pybind11.h is missing: load_inline cannot build C++ or CUDA candidates'
            : 'torch/extension.h and pybind11 found',
      fix: "apt-get install -y libtorch-dev pybind11-dev (Debian's python3-torch ships without them; pip wheels of torch include both)",
      requiredFor: backendsRequiring('torch-headers'),
    },
    {
      id: 'torch-compile',
      label: 'torch.compile',
      ok: probe.torch_compile === true,
      detail: probe.torch_compile
        ? `available: the compile baseline is timed, ${compileCache ? `compiled once per machine (the reference worker's caches in ${compileCache})` : 'compiled afresh by every reference worker (KFORGE_COMPILE_CACHE=0 or KFORGE_SANDBOX=0)'}`
        : `torch ${probe.torch} has no torch.compile: only the eager baseline is timed`,
      fix: 'PyTorch 2.x has torch.compile: pip install "torch>=2"',
      requiredFor: backendsRequiring('torch-compile'),
    },
    {
      id: 'torch-cuda',
      label: 'CUDA in PyTorch',
      ok: probe.cuda_available === true,
      detail: probe.cuda_available
        ? `CUDA ${probe.torch_cuda} available`
        : `torch ${probe.torch} sees no CUDA device${probe.torch_cuda ? '' : ' (a CPU-only build)'}`,
      fix: 'install a CUDA build of PyTorch (https://pytorch.org/get-started/locally/) on a machine with an NVIDIA GPU',
      requiredFor: backendsRequiring('torch-cuda'),
    },
  ];
}

/** A fix naming /usr/bin/python3 when the chosen Python lacks torch but that one has it. */
async function alternativePython(python: string, run: ToolRunner): Promise<string | null> {
  const system = '/usr/bin/python3';
  if (python === system || !existsSync(system)) return null;
  const other = await run(system, ['-c', 'import torch; print(torch.__version__)'], 60_000);
  return other.ok ? `set KFORGE_PYTHON=${system} (it has torch ${other.stdout.trim()})` : null;
}

function tool(id: string, label: string, result: ToolRun, version: string, fix: string): DoctorCheck {
  return { id, label, ok: result.ok, detail: result.ok ? version || 'found' : 'not found', fix, requiredFor: backendsRequiring(id) };
}

function parseProbe(result: ToolRun): Probe | null {
  if (!result.ok) return null;
  try {
    const parsed = probeSchema.safeParse(JSON.parse(result.stdout.trim().split('\n').pop() ?? ''));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

function withoutFixWhenOk(check: DoctorCheck): DoctorCheck {
  if (!check.ok) return check;
  const { fix: _fix, ...rest } = check;
  return rest;
}

function firstLine(text: string): string {
  return text.trim().split('\n')[0]?.trim() ?? '';
}
