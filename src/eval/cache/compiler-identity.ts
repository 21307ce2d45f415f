import { execa } from 'execa';

/** How long `--version` may take, in ms. */
const PROBE_TIMEOUT_MS = 10_000;

/**
 * The host C++ compiler torch's extension builder uses (`$CXX`, else `c++`) and the first line of
 * its `--version`, e.g. `c++: c++ (Debian 12.2.0-14) 12.2.0`; null when it does not answer.
 * Part of the build key: a different compiler must not reuse another's objects.
 */
export async function probeCompilerIdentity(environment: NodeJS.ProcessEnv = process.env): Promise<string | null> {
  const compiler = environment.CXX?.trim() || 'c++';
  const result = await execa(compiler, ['--version'], { reject: false, timeout: PROBE_TIMEOUT_MS, env: environment, extendEnv: false });
  if (result.failed || typeof result.stdout !== 'string') return null;
  const first = result.stdout
    .split('\n')
    .find((line) => line.trim().length > 0)
    ?.trim();
  return first ? `${compiler}: ${first}` : null;
}
