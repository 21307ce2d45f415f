import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fixturePath } from '../../../test-support/fixture-paths.js';
import { registerDoctorCommand } from './doctor.js';
import type { ToolRun, ToolRunner } from '../doctor/doctor-checks.js';
import { runProgram } from '../run-program.js';

const PROBE_OK = JSON.stringify({
  python: '3.11.2',
  executable: '/usr/bin/python3',
  python_headers: true,
  torch: '1.13.0',
  torch_compile: false,
  cuda_available: false,
  torch_cuda: null,
  numpy: '1.24.2',
  packages: { triton: null },
});

/** A machine described by the tools it has; anything else is "not found". */
function machine(tools: Record<string, ToolRun>): ToolRunner {
  return async (command, args) => {
    const key =
      command === 'nvidia-smi' || command === 'nvcc' || command === 'g++' || command === 'ninja'
        ? command
        : args[0] === '-c' && args[1]?.includes('sysconfig')
          ? 'probe'
          : args.at(-1) === 'probe' && args.some((arg) => arg.endsWith('kforge_bootstrap.py'))
            ? 'sandbox'
            : `${command} ${args.join(' ')}`;
    return tools[key] ?? { ok: false, stdout: '', stderr: `${command}: not found` };
  };
}

async function doctor(run: ToolRunner, args: string[] = ['doctor', '--json'], environment: Record<string, string> = {}) {
  let stdout = '';
  let code = -1;
  const status = await runProgram(args, [(program, io) => registerDoctorCommand(program, { ...io, run, setExitCode: (value) => void (code = value) })], {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: () => true },
    environment: { KFORGE_PYTHON: 'python3', KFORGE_WORKER_DIR: fixturePath('fake-worker'), ...environment },
    color: false,
  });
  return { stdout, code: status ?? code };
}

const ok = (stdout: string): ToolRun => ({ ok: true, stdout, stderr: '' });

describe('kforge doctor', () => {
  it('passes when the cpu backend can run, and names what the GPU backends lack', async () => {
    const { stdout, code } = await doctor(machine({ probe: ok(PROBE_OK), 'g++': ok('g++ (Debian 12.2.0) 12.2.0\n'), ninja: ok('1.11.1\n') }));
    assert.equal(code, 0);
    const report = JSON.parse(stdout) as { backends: Record<string, boolean>; checks: Array<{ id: string; ok: boolean; fix?: string }> };
    assert.deepEqual(report.backends, { cpu: true, cuda: false, triton: false });
    const byId = new Map(report.checks.map((check) => [check.id, check]));
    assert.equal(byId.get('torch')?.ok, true);
    assert.equal(byId.get('torch')?.fix, undefined, 'no fix for what is fine');
    assert.equal(byId.get('nvcc')?.ok, false);
    assert.match(byId.get('nvcc')?.fix ?? '', /CUDA toolkit/);
    assert.equal(byId.get('triton')?.fix, 'pip install triton');
  });

  it('fails when pieces the cpu backend needs are missing, with the command that installs each', async () => {
    const probe = JSON.stringify({
      ...JSON.parse(PROBE_OK),
      torch: undefined,
      torch_error: "ModuleNotFoundError: No module named 'torch'",
      python_headers: false,
    });
    const { stdout, code } = await doctor(machine({ probe: ok(probe) }));
    assert.equal(code, 1);
    const report = JSON.parse(stdout) as { backends: Record<string, boolean>; checks: Array<{ id: string; ok: boolean; fix?: string }> };
    assert.equal(report.backends.cpu, false);
    const fixes = Object.fromEntries(report.checks.filter((check) => !check.ok).map((check) => [check.id, check.fix]));
    assert.match(
      fixes.torch ?? '',
      /apt-get install -y python3-torch libtorch-dev pybind11-dev python3-numpy python3-pytest ninja-build g\+\+ python3-dev|KFORGE_PYTHON=\/usr\/bin\/python3/,
    );
    assert.equal(fixes['python-headers'], 'apt-get install -y python3-dev');
    assert.equal(fixes['g++'], 'apt-get install -y g++');
    assert.equal(fixes.ninja, 'apt-get install -y ninja-build');
  });

  it('names the Debian packages of the C++ headers load_inline needs when they are missing', async () => {
    const probe = JSON.stringify({ ...JSON.parse(PROBE_OK), torch_headers: true, pybind11_headers: false });
    const { stdout, code } = await doctor(machine({ probe: ok(probe), 'g++': ok('g++ 12\n'), ninja: ok('1.11.1\n') }));
    assert.equal(code, 1);
    const report = JSON.parse(stdout) as { backends: Record<string, boolean>; checks: Array<{ id: string; ok: boolean; detail: string; fix?: string }> };
    const headers = report.checks.find((check) => check.id === 'torch-headers');
    assert.equal(headers?.ok, false);
    assert.match(headers?.detail ?? '', /pybind11\/pybind11\.h is missing/);
    assert.match(headers?.fix ?? '', /apt-get install -y libtorch-dev pybind11-dev/);
    assert.equal(report.backends.cpu, false);
  });

  it("says where the reference worker keeps torch.compile's caches, and when each worker compiles afresh", async () => {
    const torch2 = machine({ probe: ok(JSON.stringify({ ...JSON.parse(PROBE_OK), torch: '2.11.0', torch_compile: true })) });
    const detail = async (environment: Record<string, string>) => {
      const report = JSON.parse((await doctor(torch2, ['doctor', '--json'], environment)).stdout);
      return report.checks.find((check: { id: string }) => check.id === 'torch-compile').detail as string;
    };
    assert.match(await detail({ KFORGE_CACHE_DIR: '/srv/kforge' }), /compiled once per machine \(the reference worker's caches in \/srv\/kforge\/compile\)/);
    assert.match(await detail({ KFORGE_CACHE_DIR: '/srv/kforge', KFORGE_COMPILE_CACHE: '0' }), /compiled afresh by every reference worker/);
    assert.match(await detail({ KFORGE_SANDBOX: '0' }), /compiled afresh by every reference worker/);
  });

  it("asks the probe for each backend's own Python packages and tells which backends the GPU lines decide", async () => {
    let probeArgs: readonly string[] = [];
    const gpuMachine = machine({
      probe: ok(JSON.stringify({ ...JSON.parse(PROBE_OK), cuda_available: true, torch_cuda: '12.4', packages: { triton: '3.1.0' } })),
      'nvidia-smi': ok('NVIDIA H100 80GB HBM3, 550.54.15\n'),
    });
    const run: ToolRunner = async (command, args, timeoutMs) => {
      if (args[0] === '-c' && args[1]?.includes('sysconfig')) probeArgs = args.slice(2);
      return gpuMachine(command, args, timeoutMs);
    };
    const report = JSON.parse((await doctor(run)).stdout) as {
      backends: Record<string, boolean>;
      checks: Array<{ id: string; ok: boolean; detail: string; requiredFor: string[] }>;
    };
    assert.deepEqual(probeArgs, ['triton']);
    const byId = new Map(report.checks.map((check) => [check.id, check]));
    assert.deepEqual(byId.get('triton'), { id: 'triton', label: 'Triton', ok: true, detail: 'triton 3.1.0', requiredFor: ['triton'] });
    assert.equal(byId.get('gpu')?.detail, 'NVIDIA H100 80GB HBM3, 550.54.15');
    assert.deepEqual(byId.get('gpu')?.requiredFor, ['cuda', 'triton']);
    assert.deepEqual(report.backends, { cpu: false, cuda: false, triton: true }, 'triton needs no C++ toolchain; cpu and cuda lack g++ and ninja here');
  });

  it('prints a readable table without --json', async () => {
    const { stdout } = await doctor(machine({ probe: ok(PROBE_OK), ninja: ok('1.11.1\n') }), ['doctor']);
    assert.match(stdout, /missing +g\+\+ +not found \(needed for cpu, cuda\)\n +fix: apt-get install -y g\+\+/);
    assert.match(stdout, /the cpu backend cannot run here yet\. On Debian or Ubuntu: apt-get install -y python3-torch/);
  });

  it("reports the layers of the candidate's sandbox, and what to do about a missing one, without failing the cpu backend", async () => {
    const report = (missing: string[]) =>
      ok(
        JSON.stringify({
          enabled: true,
          role: 'candidate',
          user: "uid 1000 (the parent's own user)",
          uid: null,
          namespaces: [],
          seccomp: true,
          no_new_privs: true,
          cgroup: null,
          filesystem: 'unchanged',
          network: 'host',
          python: 'isolated (-I)',
          descriptors: '0-3 only',
          missing,
        }),
      );
    const tools = { probe: ok(PROBE_OK), 'g++': ok('g++ 12\n'), ninja: ok('1.11.1\n') };
    const partial = await doctor(
      machine({ ...tools, sandbox: report(['user namespace: the kernel refused an unprivileged user namespace (Operation not permitted)']) }),
    );
    assert.equal(partial.code, 0);
    const check = (JSON.parse(partial.stdout) as { checks: Array<{ id: string; ok: boolean; detail: string; fix?: string }> }).checks.find(
      (item) => item.id === 'isolation',
    );
    assert.equal(check?.ok, false);
    assert.match(check?.detail ?? '', /Missing: user namespace: the kernel refused/);
    assert.match(check?.fix ?? '', /unprivileged_userns_clone=1/);
    const full = await doctor(machine({ ...tools, sandbox: report([]) }));
    const fine = (JSON.parse(full.stdout) as { checks: Array<{ id: string; ok: boolean; detail: string }> }).checks.find((item) => item.id === 'isolation');
    assert.equal(fine?.ok, true);
    assert.match(fine?.detail ?? '', /seccomp; no_new_privs/);
  });
});
