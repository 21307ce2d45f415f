import type { BudgetHolder } from '../pipeline-events.js';
import { formatBytes } from '../../core/number-format.js';

/**
 * Who holds a budget, for a person: each evaluation by its label, and each process's contexts in one
 * item when it holds several (a batch's workers waiting for the device hold a dozen or more).
 *
 * @example describeHolders(holders) // 'pid 619 (17 workers' contexts, 12.75 GiB), pid 619 (pid 619: 19_ReLU.py relu.py, 43.75 GiB)'
 */
export function describeHolders(holders: readonly BudgetHolder[]): string {
  const contexts = new Map<number, BudgetHolder[]>();
  for (const holder of holders) if (holder.kind === 'context') contexts.set(holder.pid, [...(contexts.get(holder.pid) ?? []), holder]);
  const items: string[] = [];
  for (const holder of holders) {
    const own = holder.kind === 'context' ? contexts.get(holder.pid)! : null;
    if (own && own.length > 1) {
      if (own[0] !== holder) continue;
      items.push(`pid ${holder.pid} (${own.length} workers' contexts, ${formatBytes(own.reduce((sum, context) => sum + context.bytes, 0))})`);
      continue;
    }
    items.push(`pid ${holder.pid} (${holder.label}, ${formatBytes(holder.bytes)})`);
  }
  return items.join(', ');
}
