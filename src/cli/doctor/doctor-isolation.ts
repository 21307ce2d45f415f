import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { WORKER_DIRECTORY } from '../../core/repository-paths.js';
import { isolationReportSchema, type IsolationReport } from '../../eval/process/isolation-report.js';
import { sandboxMode, SANDBOX_VARIABLE } from '../../eval/process/worker-sandbox.js';
import type { DoctorCheck, ToolRunner } from './doctor-check.js';

export interface IsolationCheckOptions {
  python: string;
  environment: NodeJS.ProcessEnv;
  run: ToolRunner;
  /** Folder holding `kforge_bootstrap.py` and `kforge_sandbox/`; default this checkout's `worker/`. */
  launcherDirectory?: string;
}

/**
 * `kforge doctor`'s isolation line: builds a candidate's sandbox once (`kforge_bootstrap.py probe`,
 * in a throwaway scratch folder, the home folder hidden as in an evaluation) and reports which
 * layers are in force and what stops the others. Information only: a machine that cannot isolate
 * still evaluates, and every verdict then says so.
 */
export async function isolationCheck(options: IsolationCheckOptions): Promise<DoctorCheck> {
  const base = { id: 'isolation', label: 'Candidate isolation', requiredFor: [] as DoctorCheck['requiredFor'] };
  let mode: ReturnType<typeof sandboxMode>;
  try {
    mode = sandboxMode(options.environment);
  } catch (error) {
    return { ...base, ok: false, detail: (error as Error).message, fix: `unset ${SANDBOX_VARIABLE} or set it to 1, 0 or require` };
  }
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'kforge-doctor-'));
  try {
    await mkdir(path.join(scratch, 'in'));
    const launcher = path.join(options.launcherDirectory ?? WORKER_DIRECTORY, 'kforge_bootstrap.py');
    const args = [
      '-I',
      '-B',
      '-u',
      launcher,
      '--sandbox',
      mode === 'require' ? 'on' : mode,
      '--writable',
      scratch,
      '--read-only',
      path.join(scratch, 'in'),
      '--hide',
      os.homedir(),
      'probe',
    ];
    const result = await options.run(options.python, args, 60_000);
    const report = parseReport(result.stdout);
    if (!report) {
      return {
        ...base,
        ok: false,
        detail: `the sandbox probe did not run: ${result.stderr.trim().split('\n').pop() ?? 'no output'}`,
        fix: 'run kforge from a complete checkout (worker/kforge_bootstrap.py)',
      };
    }
    return describe(base, report);
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

function parseReport(stdout: string): IsolationReport | null {
  try {
    const parsed = isolationReportSchema.safeParse(JSON.parse(stdout.trim().split('\n').pop() ?? ''));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

function describe(base: Pick<DoctorCheck, 'id' | 'label' | 'requiredFor'>, report: IsolationReport): DoctorCheck {
  const inForce = [
    report.user,
    report.namespaces.length > 0 ? `namespaces: ${report.namespaces.join(', ')}` : 'no namespaces',
    report.seccomp ? 'seccomp' : null,
    report.no_new_privs ? 'no_new_privs' : null,
    report.cgroup ? `cgroup ${report.cgroup}` : null,
    `filesystem: ${report.filesystem}`,
    `network: ${report.network}`,
  ].filter((part): part is string => part !== null);
  if (report.missing.length === 0) return { ...base, ok: true, detail: inForce.join('; ') };
  return {
    ...base,
    ok: false,
    detail: `${inForce.join('; ')}. Missing: ${report.missing.join('; ')}`,
    fix: report.enabled
      ? 'run kforge as root, or allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1; on Ubuntu also kernel.apparmor_restrict_unprivileged_userns=0); or run it inside a container or VM of its own (docs/security.md)'
      : `unset ${SANDBOX_VARIABLE} (it turns the sandbox off)`,
  };
}
