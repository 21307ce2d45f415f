import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

let ticksPerSecond: number | undefined;

/**
 * CPU seconds (user + system) of every child process this process has reaped, and of their own
 * reaped descendants: fields `cutime` and `cstime` of /proc/self/stat. Workers, ninja and the
 * compilers under them all count once their parent waited for them. Null where there is no /proc.
 */
export function reapedChildCpuSeconds(): number | null {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields 16 and 17 of stat(5), counted from the state (field 3) here.
    const ticks = Number(fields[13]) + Number(fields[14]);
    ticksPerSecond ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    return ticks / ticksPerSecond;
  } catch {
    return null;
  }
}
