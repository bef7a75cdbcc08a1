// The import graph of the project's TypeScript, read with the compiler's
// parser (no type checking): what each file imports, and whether only types.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as ts from 'typescript';
import { REPO_ROOT, type SourceFile } from './sources';

export interface ImportEdge {
  /** The importing file, relative to the repository root, with `/`. */
  readonly from: string;
  /** What it names: a package (`vscode`, `child_process`, `@modelcontextprotocol/sdk`) or a file of the repository (`src/core/text.ts`). */
  readonly to: string;
  /** True for a file of the repository, false for a package. */
  readonly local: boolean;
  /** `import type`, `export type`, or every name imported with `type`: nothing of it runs. */
  readonly typeOnly: boolean;
  readonly line: number;
}

/** Every import, re-export, `import()` and `require()` of `source`. */
export function importsOf(source: SourceFile): ImportEdge[] {
  const file = ts.createSourceFile(source.file, source.code, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const edges: ImportEdge[] = [];
  const add = (specifier: ts.Expression | undefined, typeOnly: boolean, at: ts.Node): void => {
    if (specifier === undefined || !ts.isStringLiteralLike(specifier)) return;
    const line = file.getLineAndCharacterOfPosition(at.getStart(file)).line + 1;
    edges.push({ from: source.file, ...target(source.file, specifier.text), typeOnly, line });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node)) add(node.moduleSpecifier, importIsTypeOnly(node.importClause), node);
    else if (ts.isExportDeclaration(node)) add(node.moduleSpecifier, node.isTypeOnly || (node.exportClause !== undefined && ts.isNamedExports(node.exportClause) && node.exportClause.elements.length > 0 && node.exportClause.elements.every((e) => e.isTypeOnly)), node);
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) add(node.moduleReference.expression, node.isTypeOnly, node);
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) add(node.argument.literal, true, node);
    else if (ts.isCallExpression(node) && (node.expression.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(node.expression) && node.expression.text === 'require'))) add(node.arguments[0], false, node);
    ts.forEachChild(node, visit);
  };
  visit(file);
  return edges;
}

function importIsTypeOnly(clause: ts.ImportClause | undefined): boolean {
  if (clause === undefined) return false;
  if (clause.isTypeOnly) return true;
  const named = clause.namedBindings;
  return clause.name === undefined && named !== undefined && ts.isNamedImports(named) && named.elements.length > 0 && named.elements.every((e) => e.isTypeOnly);
}

/** A relative specifier as the file it resolves to; anything else as its package's name (`node:` dropped). */
function target(from: string, specifier: string): { to: string; local: boolean } {
  if (!specifier.startsWith('.')) {
    const bare = specifier.replace(/^node:/, '');
    const parts = bare.split('/');
    return { to: (bare.startsWith('@') ? parts.slice(0, 2) : parts.slice(0, 1)).join('/'), local: false };
  }
  const base = path.join(REPO_ROOT, path.dirname(from), specifier);
  const found = [base, `${base}.ts`, path.join(base, 'index.ts'), base.replace(/\.js$/, '.ts')].find((candidate) => fs.statSync(candidate, { throwIfNoEntry: false })?.isFile());
  return { to: path.relative(REPO_ROOT, found ?? base).split(path.sep).join('/'), local: true };
}
