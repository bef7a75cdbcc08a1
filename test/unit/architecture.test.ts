import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as ts from 'typescript';
import { importsOf, type ImportEdge } from '../helpers/importGraph';
import { REPO_ROOT, commandRegistrations, sourcesUnder } from '../helpers/sources';

/**
 * What docs/architecture.md says that a program can check, checked against
 * the code: the "May import" column of its Layout table, the modules that
 * may start a process, and which feature registers which command. Each
 * failure names the claim and the file that breaks it.
 */
const MAP = 'docs/architecture.md';
const map = fs.readFileSync(path.join(REPO_ROOT, MAP), 'utf8');

/** The packages whose import lets a module start a process (the map says so below its table). */
const PROCESS_PACKAGES = ['child_process', 'simple-git'];

interface Place {
  /** A folder (ending in `/`) or a file, relative to the repository root. */
  readonly path: string;
}

type Clause =
  | { readonly kind: 'never'; readonly names: readonly string[] }
  | { readonly kind: 'only'; readonly names: readonly string[]; readonly files?: readonly string[] }
  | { readonly kind: 'types'; readonly of: string };

interface LayoutRow {
  readonly label: string;
  readonly scope: readonly Place[];
  readonly clauses: readonly Clause[];
}

const ticked = (text: string): string[] => [...text.matchAll(/`([^`]+)`/g)].map((m) => m[1] ?? '');
const holds = (place: Place, file: string): boolean => (place.path.endsWith('/') ? file.startsWith(place.path) : file === place.path);
const isLocal = (name: string): boolean => /^(src|webview|test)\//.test(name);
/** A name of the column on an import: a package by its name, a Candor folder or file by its path. */
const names = (name: string, edge: ImportEdge): boolean => (isLocal(name) ? edge.local && (edge.to === name || edge.to.startsWith(name.endsWith('/') ? name : `${name}/`)) : !edge.local && edge.to === name);

/** The lines of the first table after `heading`, each split into its cells. */
function tableAfter(heading: string): string[][] {
  const start = map.indexOf(`\n${heading}\n`);
  assert.ok(start >= 0, `${MAP} has the heading "${heading}"`);
  const lines = map.slice(start).split('\n');
  const first = lines.findIndex((line) => line.startsWith('|'));
  const rows: string[][] = [];
  for (const line of lines.slice(first + 2)) {
    if (!line.startsWith('|')) break;
    rows.push(line.slice(1, -1).split(' | ').map((cell) => cell.trim()));
  }
  assert.ok(rows.length > 0, `${MAP}, "${heading}": a table follows`);
  return rows;
}

function clause(text: string, label: string): Clause {
  const never = /^never (.+)$/.exec(text);
  if (never) return { kind: 'never', names: ticked(never[1] ?? '') };
  const types = /^types of `([^`]+)` only$/.exec(text);
  if (types) return { kind: 'types', of: types[1] ?? '' };
  const within = /^(`[^`]+`(?:, `[^`]+`)*) in (.+) only$/.exec(text);
  if (within) return { kind: 'only', names: ticked(within[1] ?? ''), files: ticked(within[2] ?? '') };
  if (/^`[^`]+`(?:, `[^`]+`)*(?: \(nowhere else\))?$/.test(text)) return { kind: 'only', names: ticked(text) };
  assert.fail(`${MAP}, Layout, row ${label}: "May import" says "${text}", which ${path.basename(__filename)} cannot check; write it as "never …", "\`pkg\`", "\`pkg\` in \`file.ts\` only" or "types of \`folder\` only"`);
}

function layoutRows(): LayoutRow[] {
  return tableAfter('## Layout').map(([folder = '', , mayImport = '']) => {
    const scope = ticked(folder).map((p) => ({ path: fs.statSync(path.join(REPO_ROOT, p), { throwIfNoEntry: false })?.isDirectory() && !p.endsWith('/') ? `${p}/` : p }));
    const clauses = mayImport === '' ? [] : mayImport.split('; ').map((text) => clause(text, folder));
    return { label: folder, scope, clauses };
  });
}

/** Every import of src/ and webview/. */
function importGraph(): { files: string[]; edges: ImportEdge[] } {
  const sources = [...sourcesUnder('src', ['src/extension.ts'], /\.ts$/), ...sourcesUnder('webview', ['webview/main.ts'], /\.ts$/)];
  const edges = sources.flatMap(importsOf);
  // The graph must be read, or every absence below holds.
  assert.ok(edges.some((e) => e.from === 'src/extension.ts' && e.to === 'vscode'), 'the graph holds src/extension.ts → vscode');
  assert.ok(edges.some((e) => e.from === 'src/core/provider/openaiModel.ts' && e.to === 'openai'), 'the graph holds the openai adapter');
  assert.ok(edges.length > 1000, `the graph holds the imports (${edges.length})`);
  return { files: sources.map((s) => s.file), edges };
}

const at = (edge: ImportEdge): string => `${edge.from}:${edge.line}`;

/** The places each package named in the column may be imported from. */
function packagePlaces(rows: readonly LayoutRow[]): Map<string, Place[]> {
  const places = new Map<string, Place[]>();
  for (const row of rows) {
    for (const c of row.clauses) {
      if (c.kind !== 'only') continue;
      for (const name of c.names.filter((n) => !isLocal(n))) {
        const where = c.files === undefined ? row.scope : row.scope.flatMap((folder) => (c.files ?? []).map((file) => ({ path: `${folder.path}${file}` })));
        places.set(name, [...(places.get(name) ?? []), ...where]);
      }
    }
  }
  return places;
}

/** `PROCESS_STARTERS` as `eslint.config.mjs` declares it. */
function processStarters(): string[] {
  const file = 'eslint.config.mjs';
  const source = ts.createSourceFile(file, fs.readFileSync(path.join(REPO_ROOT, file), 'utf8'), ts.ScriptTarget.Latest, true, ts.ScriptKind.JS);
  let found: string[] | undefined;
  const visit = (node: ts.Node): void => {
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.name.text === 'PROCESS_STARTERS' && node.initializer !== undefined && ts.isArrayLiteralExpression(node.initializer)) {
      found = node.initializer.elements.filter(ts.isStringLiteral).map((e) => e.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  assert.ok(found !== undefined && found.length > 0, `${file} declares PROCESS_STARTERS`);
  return found;
}

describe('docs/architecture.md is true of the code', function () {
  this.timeout(60_000);
  let rows: LayoutRow[];
  let graph: { files: string[]; edges: ImportEdge[] };
  before(() => {
    rows = layoutRows();
    graph = importGraph();
  });

  it('every row of the Layout table names files that exist', () => {
    for (const row of rows) {
      for (const place of row.scope) {
        assert.ok(fs.existsSync(path.join(REPO_ROOT, place.path)), `${MAP}, Layout, row ${row.label}: ${place.path} does not exist`);
      }
      if (row.clauses.length > 0) assert.ok(row.scope.every((place) => /^(src|webview)\//.test(place.path)), `${MAP}, Layout, row ${row.label}: only src/ and webview/ are read for imports`);
    }
  });

  it('"never": no file of the row imports what it names', () => {
    const broken: string[] = [];
    for (const row of rows) {
      for (const c of row.clauses) {
        if (c.kind !== 'never') continue;
        for (const edge of graph.edges.filter((e) => row.scope.some((p) => holds(p, e.from)))) {
          for (const name of c.names.filter((n) => names(n, edge))) broken.push(`row ${row.label} says never \`${name}\`, and ${at(edge)} imports ${edge.to}`);
        }
      }
    }
    assert.deepEqual(broken, [], MAP);
  });

  it('a package the column names is imported only where it names it', () => {
    const places = packagePlaces(rows);
    assert.ok(places.has('openai') && places.has('vscode'), `${MAP}: the column names openai and vscode (${[...places.keys()].join(', ')})`);
    const broken: string[] = [];
    for (const edge of graph.edges) {
      const where = places.get(edge.to);
      if (edge.local || where === undefined || where.some((p) => holds(p, edge.from))) continue;
      broken.push(`\`${edge.to}\` is named only for ${where.map((p) => p.path).join(', ')}, and ${at(edge)} imports it`);
    }
    assert.deepEqual(broken, [], MAP);
    for (const [name, where] of places) {
      for (const place of where) assert.ok(graph.files.some((f) => holds(place, f)), `${MAP}: \`${name}\` is allowed in ${place.path}, which holds no file`);
    }
  });

  it('a Candor folder the column names is all of Candor\'s code the row imports; "types of" allows types alone', () => {
    const broken: string[] = [];
    for (const row of rows) {
      const local = row.clauses.flatMap((c) => (c.kind === 'only' ? c.names.filter(isLocal) : []));
      const types = row.clauses.flatMap((c) => (c.kind === 'types' ? [c.of] : []));
      if (local.length === 0 && types.length === 0) continue;
      for (const edge of graph.edges.filter((e) => e.local && row.scope.some((p) => holds(p, e.from)) && !row.scope.some((p) => holds(p, e.to)))) {
        if (local.some((name) => names(name, edge))) continue;
        if (types.some((name) => names(name, edge)) && edge.typeOnly) continue;
        broken.push(`row ${row.label} allows ${[...local, ...types.map((t) => `types of ${t}`)].join(', ')}, and ${at(edge)} imports ${edge.typeOnly ? 'types of ' : ''}${edge.to}`);
      }
    }
    assert.deepEqual(broken, [], MAP);
  });

  it('the modules the map lets start a process are PROCESS_STARTERS of eslint.config.mjs', () => {
    const places = packagePlaces(rows);
    const named = PROCESS_PACKAGES.flatMap((name) => places.get(name) ?? []).map((p) => p.path);
    assert.ok(named.every((p) => !p.endsWith('/')), `${MAP}: a module that starts a process is named by its file (${named.join(', ')})`);
    assert.deepEqual([...new Set(named)].sort(), [...processStarters()].sort(), `${MAP} (the files allowed ${PROCESS_PACKAGES.join(' or ')}) against eslint.config.mjs (PROCESS_STARTERS)`);
  });

  it('no two folders of src/core import each other (each pair of folders has one direction)', () => {
    const cycles = folderCycles(graph.edges, 'src/core/');
    assert.ok(folderArrows(graph.edges, 'src/core/').size > 20, 'the folders of src/core import one another (the check reads the graph)');
    assert.deepEqual(cycles, [], `${MAP}: folders of src/core that import each other`);
  });

  it('no host file reads a candor.* setting but through the settings snapshot (src/host/settings/)', () => {
    const sources = sourcesUnder('src/host', ['src/host/settings/config.ts', 'src/host/context/statusGauge.ts'], /\.ts$/).filter((s) => !s.file.startsWith('src/host/settings/'));
    const reads = sources.flatMap(rawSettingReads);
    assert.deepEqual(reads, [], `${MAP}, "Settings and trust": a candor.* value read with get() bypasses the trust rules`);
  });

  describe('which feature registers which command', () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { contributes: { commands: Array<{ command: string }> } };
    const declared = manifest.contributes.commands.map((c) => c.command);
    const table = tableAfter('### Commands').flatMap(([feature = '', commands = '']) => ticked(commands).map((id) => ({ id, feature: ticked(feature)[0] ?? feature })));

    it('the table names each command of package.json once, and no other', () => {
      assert.ok(declared.length >= 10, `package.json declares the commands (${declared.length})`);
      assert.deepEqual(table.map((t) => t.id).sort(), [...declared].sort(), `${MAP}, "Commands" against package.json's contributes.commands`);
    });

    it('each is registered once, in the folder of the feature the table names, from the register.ts that services.ts calls', () => {
      const registrations = commandRegistrations();
      const services = new Set(graph.edges.filter((e) => e.from === 'src/host/services.ts' && e.local).map((e) => e.to));
      const broken: string[] = [];
      for (const { id, feature } of table) {
        const files = registrations.filter((r) => r.id === id).map((r) => r.file);
        const folder = `src/host/${feature}/`;
        const register = `${folder}register.ts`;
        if (files.length !== 1) broken.push(`${id} (${feature}) is registered in ${files.length === 0 ? 'no file' : files.join(' and ')}`);
        else if (!(files[0] ?? '').startsWith(folder)) broken.push(`${id} is the ${feature} feature's, and ${files[0]} registers it`);
        else if (!services.has(register)) broken.push(`${id}: ${register} is not called by src/host/services.ts`);
        else if (!reaches(register, files[0] ?? '', folder, graph.edges)) broken.push(`${id}: ${files[0]} registers it, and ${register} does not import it`);
      }
      assert.deepEqual(broken, [], MAP);
    });
  });
});

/** `to` is `from`, or one of the files `from` imports within `folder`, at any depth. */
function reaches(from: string, to: string, folder: string, edges: readonly ImportEdge[]): boolean {
  const seen = new Set([from]);
  const pending = [from];
  while (pending.length > 0) {
    const next = pending.pop() ?? '';
    if (next === to) return true;
    for (const edge of edges) {
      if (edge.from === next && edge.local && edge.to.startsWith(folder) && !seen.has(edge.to)) {
        seen.add(edge.to);
        pending.push(edge.to);
      }
    }
  }
  return false;
}

/** The folder directly under `root` that holds `file`; undefined for a file of `root` itself or outside it. */
function folderOf(file: string, root: string): string | undefined {
  if (!file.startsWith(root)) return undefined;
  const rest = file.slice(root.length).split('/');
  return rest.length > 1 ? rest[0] : undefined;
}

/** For each pair "a → b" of folders under `root`, the first import that makes it. */
function folderArrows(edges: readonly ImportEdge[], root: string): Map<string, ImportEdge> {
  const arrows = new Map<string, ImportEdge>();
  for (const edge of edges) {
    const from = folderOf(edge.from, root);
    const to = folderOf(edge.to, root);
    if (!edge.local || from === undefined || to === undefined || from === to) continue;
    if (!arrows.has(`${from} → ${to}`)) arrows.set(`${from} → ${to}`, edge);
  }
  return arrows;
}

/** Each pair of folders under `root` that import each other, with an import of each direction. */
function folderCycles(edges: readonly ImportEdge[], root: string): string[] {
  const arrows = folderArrows(edges, root);
  const cycles: string[] = [];
  for (const [arrow, edge] of arrows) {
    const [from = '', to = ''] = arrow.split(' → ');
    const back = arrows.get(`${to} → ${from}`);
    if (back !== undefined && from < to) cycles.push(`${from} ↔ ${to}: ${at(edge)} imports ${edge.to}, and ${at(back)} imports ${back.to}`);
  }
  return cycles;
}

/**
 * Each `get` of a configuration section `candor…` (`getConfiguration('candor').get(…)`,
 * directly or through a variable): the value VS Code merges from every layer,
 * an untrusted workspace's included. Writes (`update`) and `inspect` for a write are not reads of a value in force.
 */
function rawSettingReads(source: { file: string; code: string }): string[] {
  const file = ts.createSourceFile(source.file, source.code, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const isCandorSection = (node: ts.Node): node is ts.CallExpression =>
    ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && node.expression.name.text === 'getConfiguration'
    && node.arguments[0] !== undefined && ts.isStringLiteralLike(node.arguments[0]) && /^candor(\.|$)/.test(node.arguments[0].text);
  const sections = new Set<string>();
  const reads: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer !== undefined && isCandorSection(node.initializer)) sections.add(node.name.text);
    if (ts.isPropertyAccessExpression(node) && node.name.text === 'get' && (isCandorSection(node.expression) || (ts.isIdentifier(node.expression) && sections.has(node.expression.text)))) {
      reads.push(`${source.file}:${file.getLineAndCharacterOfPosition(node.getStart(file)).line + 1}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return reads;
}
