import type { KeyboardEvent } from 'react';
import type { CandidateNode } from '../../../src/server/api-types';
import { speedup } from '../lib/format';
import { VERDICT_COLORS, verdictLabel, type Verdict } from '../lib/verdicts';
import { Dot } from './badges';

interface TreeRow {
  node: CandidateNode;
  depth: number;
}

/** Depth-first rows: each root, then its children in creation order. */
function rows(candidates: readonly CandidateNode[]): TreeRow[] {
  const ids = new Set(candidates.map((node) => node.id));
  const children = new Map<number | null, CandidateNode[]>();
  for (const node of candidates) {
    const parent = node.parentId !== null && ids.has(node.parentId) ? node.parentId : null;
    children.set(parent, [...(children.get(parent) ?? []), node]);
  }
  const out: TreeRow[] = [];
  const visit = (parent: number | null, depth: number): void => {
    for (const node of children.get(parent) ?? []) {
      out.push({ node, depth });
      visit(node.id, depth + 1);
    }
  };
  visit(null, 0);
  return out;
}

function tooltip(node: CandidateNode): string {
  const parts = [`#${node.id}, round ${node.round}`, verdictLabel(node.verdict)];
  if (node.ideaLabel) parts.push(`idea: ${node.ideaLabel}`);
  if (node.origin !== 'model') parts.push(node.origin === 'human' ? 'written by a person' : 'from a file');
  if (node.firstReason) parts.push(node.firstReason);
  return parts.join(' · ');
}

/**
 * Keys on a tree row (the WAI-ARIA tree pattern, flat): Enter or Space selects the candidate; the arrow
 * keys, Home and End move the focus between rows.
 */
function onRowKeyDown(event: KeyboardEvent<HTMLDivElement>, select: () => void): void {
  const row = event.currentTarget;
  let target: Element | null | undefined;
  if (event.key === 'Enter' || event.key === ' ') {
    event.preventDefault();
    select();
    return;
  }
  if (event.key === 'ArrowDown') target = row.nextElementSibling;
  else if (event.key === 'ArrowUp') target = row.previousElementSibling;
  else if (event.key === 'Home') target = row.parentElement?.firstElementChild;
  else if (event.key === 'End') target = row.parentElement?.lastElementChild;
  else return;
  event.preventDefault();
  if (target instanceof HTMLElement) target.focus();
}

/** One candidate of the tree, indented by its depth; the row in the tab order is `tabStop`. */
function TreeRow({
  node,
  depth,
  selected,
  tabStop,
  bestId,
  onSelect,
}: {
  node: CandidateNode;
  depth: number;
  selected: number | null;
  tabStop: number | null;
  bestId: number | null;
  onSelect: (id: number) => void;
}) {
  return (
    <div
      role="treeitem"
      tabIndex={node.id === tabStop ? 0 : -1}
      aria-selected={node.id === selected}
      data-testid={`tree-node-${node.id}`}
      className={`tree-node ${node.id === selected ? 'selected' : ''}`}
      style={{ paddingLeft: 10 }}
      title={tooltip(node)}
      onClick={() => onSelect(node.id)}
      onKeyDown={(event) => onRowKeyDown(event, () => onSelect(node.id))}
    >
      {Array.from({ length: depth }, (_, index) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: the indent guides are identical; a guide's depth is its identity.
        <span key={index} className="guide" />
      ))}
      <Dot verdict={node.verdict} />
      <span className="node-id">#{node.id}</span>
      <span className="faint" style={{ fontSize: 11.5 }}>
        r{node.round}
      </span>
      {node.ideaLabel ? <span className="chip idea">{node.ideaLabel}</span> : null}
      {node.origin === 'human' ? <span className="chip human">person</span> : null}
      {node.accepted ? <span className="chip accepted">accepted</span> : null}
      {node.id === bestId ? (
        <span role="img" title="fastest correct" aria-label="fastest correct">
          ★
        </span>
      ) : null}
      {typeof node.ownShare === 'number' ? (
        <span className="faint" style={{ fontSize: 11.5 }} title="own kernels' share of the traced call's time (attribution)">
          own {Math.round(node.ownShare * 100)}%
        </span>
      ) : null}
      <span className="node-speed">
        {node.evaluating ? <span className="spinner" style={{ width: 10, height: 10 }} /> : node.verdict === 'correct' ? speedup(node.speedupVsBest) : ''}
      </span>
    </div>
  );
}

/** The colours of the verdicts the tree shows, and what its figures are. */
function TreeLegend({ present }: { present: ReadonlySet<Verdict | null> }) {
  return (
    <div className="legend">
      {(Object.keys(VERDICT_COLORS) as Verdict[])
        .filter((verdict) => present.has(verdict))
        .map((verdict) => (
          <span key={verdict}>
            <i style={{ background: VERDICT_COLORS[verdict] }} />
            {verdictLabel(verdict)}
          </span>
        ))}
      {present.has(null) ? (
        <span>
          <i style={{ background: '#afb8c1' }} />
          not evaluated
        </span>
      ) : null}
      <span>speedup vs best baseline</span>
    </div>
  );
}

/**
 * The lineage of a problem's candidates as an indented tree: a dot coloured by verdict, the id,
 * round, idea label and origin, and the speedup over the best baseline of correct ones.
 */
export function CandidateTree({
  candidates,
  selected,
  onSelect,
  bestId,
}: {
  candidates: readonly CandidateNode[];
  selected: number | null;
  onSelect: (id: number) => void;
  bestId: number | null;
}) {
  const present = new Set(candidates.map((node) => node.verdict));
  const tree = rows(candidates);
  // One row is in the tab order (roving tabindex): the selected one, else the first.
  const tabStop = tree.some(({ node }) => node.id === selected) ? selected : (tree[0]?.node.id ?? null);
  return (
    <>
      <div className="tree" role="tree" aria-label="candidate tree">
        {tree.map(({ node, depth }) => (
          <TreeRow key={node.id} node={node} depth={depth} selected={selected} tabStop={tabStop} bestId={bestId} onSelect={onSelect} />
        ))}
      </div>
      <TreeLegend present={present} />
    </>
  );
}
