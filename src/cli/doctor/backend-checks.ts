import type { PackageCheck, ToolCheck } from '../../backends/backend-module.js';
import { BACKEND_MODULES, backendsRequiring } from '../../backends/registry.js';
import type { Backend } from '../../core/verdict.js';
import type { DoctorCheck, ToolRun, ToolRunner } from './doctor-check.js';

function unique<T extends { id: string }>(items: readonly T[]): T[] {
  const seen = new Set<string>();
  return items.filter((item) => !seen.has(item.id) && seen.add(item.id));
}

/** The backends' own command checks (`doctor.ts` of each), once each, in the registry's order. */
export function backendTools(): ToolCheck[] {
  return unique(BACKEND_MODULES.flatMap((module) => module.doctor.tools));
}

/** The backends' own Python distributions (`doctor.ts` of each), once each, in the registry's order. */
export function backendPackages(): PackageCheck[] {
  return unique(BACKEND_MODULES.flatMap((module) => module.doctor.packages));
}

/** Runs every backend's command checks at once; their answers by check id. */
export async function runBackendTools(run: ToolRunner): Promise<Map<string, ToolRun>> {
  const tools = backendTools();
  const answers = await Promise.all(tools.map((tool) => run(tool.command, tool.args, tool.timeoutMs)));
  return new Map(tools.map((tool, index) => [tool.id, answers[index]!]));
}

/** The doctor's lines for the backends' own tools and packages, from the tools' answers and the probe's package versions. */
export function backendChecks(answers: ReadonlyMap<string, ToolRun>, packages: Readonly<Record<string, string | null>> | null): DoctorCheck[] {
  const tools = backendTools().map((tool): DoctorCheck => {
    const answer = answers.get(tool.id) ?? { ok: false, stdout: '', stderr: '' };
    const ok = tool.found ? tool.found(answer) : answer.ok;
    return { id: tool.id, label: tool.label, ok, detail: tool.detail(answer), fix: tool.fix, requiredFor: backendsRequiring(tool.id) };
  });
  const distributions = backendPackages().map((check): DoctorCheck => {
    const version = packages?.[check.distribution] ?? null;
    return {
      id: check.id,
      label: check.label,
      ok: Boolean(version),
      detail: version ? `${check.distribution} ${version}` : 'not installed',
      fix: check.fix,
      requiredFor: backendsRequiring(check.id),
    };
  });
  return [...tools, ...distributions];
}

/** Which backends can run here: those whose every required check passed. */
export function runnableBackends(checks: readonly DoctorCheck[]): Record<Backend, boolean> {
  const names = BACKEND_MODULES.map((module) => module.name).sort();
  const runnable = names.map((name) => [name, checks.every((check) => check.ok || !check.requiredFor.includes(name))] as const);
  return Object.fromEntries(runnable) as Record<Backend, boolean>;
}
