import { BACKENDS, type Backend } from '../core/verdict.js';
import type { BackendModule, DeviceKind } from './backend-module.js';
import { cpuBackend } from './cpu/index.js';
import { cudaBackend } from './cuda/index.js';
import { tritonBackend } from './triton/index.js';

/**
 * Every backend by name, one folder each: the one place that lists the folders of src/backends/
 * (`registry.test.ts` holds it to them). Keyed by `Backend`, so a name added to `BACKENDS`
 * (src/core/verdict.ts) without its module here does not compile.
 */
const MODULES: Readonly<Record<Backend, BackendModule>> = { cuda: cudaBackend, triton: tritonBackend, cpu: cpuBackend };

/** Every backend's module, in the order of `BACKENDS`. */
export const BACKEND_MODULES: readonly BackendModule[] = BACKENDS.map((name) => MODULES[name]);

/** The module of one backend. */
export function backendModule(backend: Backend): BackendModule {
  return MODULES[backend];
}

/** Whether a backend evaluates on the host's CPU (its `detect.kind` is `cpu`) rather than on a GPU. */
export function runsOnHost(backend: Backend): boolean {
  return backendModule(backend).detect.kind === 'cpu';
}

/** The backend a command picks when none is asked for: cuda when a GPU is visible, else cpu. */
export function defaultBackendFor(gpuVisible: boolean): Backend {
  return gpuVisible ? cudaBackend.name : cpuBackend.name;
}

/** Names in a sentence: `cuda, triton or cpu`, `cuda and triton`. */
export function joinNames(names: readonly string[], conjunction: 'or' | 'and'): string {
  return names.length < 2 ? names.join('') : `${names.slice(0, -1).join(', ')} ${conjunction} ${names.at(-1)}`;
}

/** The backends for `--backend`'s help, e.g. `cuda, triton or cpu`. */
export function backendChoices(quote = ''): string {
  return joinNames(
    BACKEND_MODULES.map((module) => `${quote}${module.name}${quote}`),
    'or',
  );
}

/** The backends that run on one kind of device, e.g. `cuda and triton` for `gpu`. */
export function backendsOfKind(kind: DeviceKind): string {
  return joinNames(
    BACKEND_MODULES.filter((module) => module.detect.kind === kind).map((module) => module.name),
    'and',
  );
}

/** A setting that differs by backend, in words: `1000 on cuda and triton, 0 on cpu`. */
export function describePerBackend(value: (module: BackendModule) => string | number): string {
  const groups = new Map<string, string[]>();
  for (const module of BACKEND_MODULES) {
    const key = String(value(module));
    groups.set(key, [...(groups.get(key) ?? []), module.name]);
  }
  return [...groups].map(([key, names]) => `${key} on ${joinNames(names, 'and')}`).join(', ');
}

/** The backends that cannot run without the doctor check `id`, by name (the order `kforge doctor` prints). */
export function backendsRequiring(id: string): Backend[] {
  return BACKEND_MODULES.filter((module) => module.doctor.requires.includes(id))
    .map((module) => module.name)
    .sort();
}
