// Holds CONTRIBUTING's convention 4: a file stays within 300 lines and a function within 60, or says why.
//   node scripts/sizes.mjs src web/src          # lists what is over and has no reason; exits 1 if any
//   node scripts/sizes.mjs --all src web/src    # lists everything over, "(reason given)" after the ones that say why
// A file's reason is a comment near its top starting "Longer than convention 4's 300 lines: ..."; a function's is a
// comment just before it (or before the declaration, property or export that holds it) starting "Longer than
// convention 4's 60 lines: ...". Test files (*.test.ts, *.test.tsx) and declaration files (*.d.ts) are not counted.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

const FILE_LIMIT = 300;
const FUNCTION_LIMIT = 60;
const FILE_REASON = "Longer than convention 4's 300 lines:";
const FUNCTION_REASON = "Longer than convention 4's 60 lines:";
/** How far into a file its reason may stand (the file's leading comment). */
const FILE_REASON_REACH = 2000;

/** Whether `name` is a TypeScript source file that counts (not a test, not declarations). */
function counted(name) {
  return /\.tsx?$/.test(name) && !/\.test\.tsx?$/.test(name) && !name.endsWith('.d.ts');
}

/** The TypeScript source files under `root` (or `root` itself), tests and declarations left out. */
function sourceFiles(root) {
  if (!statSync(root).isDirectory()) return counted(root) ? [root] : [];
  return readdirSync(root).flatMap((name) => (name === 'node_modules' || name === 'dist' ? [] : sourceFiles(join(root, name))));
}

/** The comments just before `node` and before each node above it up to the statement or member that holds it. */
function leadingComments(text, node) {
  const comments = [];
  for (let current = node; current && !ts.isSourceFile(current); current = current.parent) {
    for (const range of ts.getLeadingCommentRanges(text, current.getFullStart()) ?? []) comments.push(text.slice(range.pos, range.end));
    if (ts.isStatement(current) || ts.isClassElement(current) || ts.isPropertyAssignment(current)) break;
  }
  return comments.join('\n');
}

/** A name for a function: its own, its variable's or property's, else `<anonymous>`. */
function functionName(node) {
  if (node.name) return node.name.getText();
  const parent = node.parent;
  if (parent && (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) && parent.name) return parent.name.getText();
  return '<anonymous>';
}

/** The entries of one file over the limits: `{ kind, file, line, name, lines, reason }`. */
export function oversizedIn(file) {
  const text = readFileSync(file, 'utf8');
  const entries = [];
  const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
  if (lines > FILE_LIMIT) entries.push({ kind: 'FILE', file, line: 1, name: '', lines, reason: text.slice(0, FILE_REASON_REACH).includes(FILE_REASON) });
  const kind = file.endsWith('x') ? ts.ScriptKind.TSX : ts.ScriptKind.TS;
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, kind);
  const visit = (node) => {
    if (ts.isFunctionLike(node) && node.body) {
      const start = source.getLineAndCharacterOfPosition(node.getStart()).line;
      const end = source.getLineAndCharacterOfPosition(node.end).line;
      const span = end - start + 1;
      if (span > FUNCTION_LIMIT) {
        const reason = leadingComments(text, node).includes(FUNCTION_REASON);
        entries.push({ kind: 'FUNC', file, line: start + 1, name: functionName(node), lines: span, reason });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return entries;
}

/** The entries over the limits in every source file under `roots`. */
export function oversized(roots) {
  return roots.flatMap(sourceFiles).flatMap(oversizedIn);
}

const argv = process.argv.slice(2);
const all = argv.includes('--all');
const roots = argv.filter((argument) => argument !== '--all');
if (roots.length > 0) {
  const entries = oversized(roots);
  for (const entry of entries) {
    if (entry.reason && !all) continue;
    const where = entry.kind === 'FILE' ? entry.file : `${entry.file}:${entry.line} ${entry.name}`;
    console.log(`${entry.kind} ${where} ${entry.lines}${entry.reason ? ' (reason given)' : ''}`);
  }
  process.exitCode = entries.some((entry) => !entry.reason) ? 1 : 0;
}
