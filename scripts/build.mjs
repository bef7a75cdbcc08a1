// One build for the three bundles: the extension host (Node, CommonJS,
// `vscode` external), the CLI (Node), and the chat webview (browser).
// Tokenizer ranks are bundled apart and loaded only when first needed.
import * as esbuild from 'esbuild';
import * as fs from 'node:fs';
import * as path from 'node:path';

const production = process.argv.includes('--production');
const root = path.dirname(path.dirname(new URL(import.meta.url).pathname));
const dist = path.join(root, 'dist');
fs.rmSync(dist, { recursive: true, force: true });
fs.mkdirSync(path.join(dist, 'ranks'), { recursive: true });

/** `js-tiktoken/ranks/<name>` → `./ranks/<name>.js` beside the bundle, loaded lazily at run time. */
const lazyRanks = {
  name: 'lazy-ranks',
  setup(build) {
    build.onResolve({ filter: /^js-tiktoken\/ranks\/(o200k_base|cl100k_base)$/ }, (args) => ({
      path: `./ranks/${args.path.split('/').pop()}.js`,
      external: true,
    }));
  },
};

const node = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  sourcemap: production ? false : 'linked',
  minify: production,
  logLevel: 'warning',
  plugins: [lazyRanks],
};

/** A third-party CommonJS module copied into dist/ as one minified file, loaded at run time. */
const vendored = (entry, out) =>
  esbuild.build({ ...node, plugins: [], sourcemap: false, minify: true, entryPoints: [path.join(root, entry)], outfile: path.join(dist, out) });

/** A webview's browser bundle. */
const browser = (entry, out) =>
  esbuild.build({
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

await Promise.all([
  esbuild.build({ ...node, entryPoints: [path.join(root, 'src/extension.ts')], outfile: path.join(dist, 'extension.js'), external: ['vscode'] }),
  esbuild.build({ ...node, entryPoints: [path.join(root, 'src/cli/main.ts')], outfile: path.join(dist, 'cli.js'), banner: { js: '#!/usr/bin/env node' } }),
  ...['o200k_base', 'cl100k_base'].map((name) => vendored(`node_modules/js-tiktoken/dist/ranks/${name}.cjs`, `ranks/${name}.js`)),
  // js-tiktoken's Tiktoken for the tokenizer worker thread (see src/core/context/tokenizer).
  vendored('node_modules/js-tiktoken/dist/lite.cjs', 'tiktoken-lite.js'),
  browser('webview/main.ts', 'webview.js'),
  // The prompt-evolution review panel (src/host/promptEvolution/promptReview.ts).
  browser('webview/promptReview.ts', 'promptReview.js'),
]);
fs.copyFileSync(path.join(root, 'webview/chat.css'), path.join(dist, 'webview.css'));
fs.copyFileSync(path.join(root, 'webview/promptReview.css'), path.join(dist, 'promptReview.css'));
fs.copyFileSync(path.join(root, 'node_modules/sql.js/dist/sql-wasm.wasm'), path.join(dist, 'sql-wasm.wasm'));
console.log(`built ${production ? 'production' : 'development'} bundles in ${path.relative(root, dist)}/`);
