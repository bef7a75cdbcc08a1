// Runs the host-side suites in a desktop VS Code through @vscode/test-electron.
// It downloads VS Code first, so it needs the internet: on an offline machine
// use `npm test`, which runs the same extension in code-server.
import * as esbuild from 'esbuild';
import * as path from 'node:path';
import { execSync } from 'node:child_process';
import { runTests } from '@vscode/test-electron';

const root = path.dirname(path.dirname(new URL(import.meta.url).pathname));
execSync('node scripts/build.mjs', { cwd: root, stdio: 'inherit' });
await esbuild.build({
  entryPoints: [path.join(root, 'test/desktop/index.ts')],
  outfile: path.join(root, 'out/desktop/index.js'),
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  external: ['vscode', 'mocha'],
});
// --build-only: the bundles for the "Extension Tests" launch configuration, without running them here.
if (process.argv.includes('--build-only')) process.exit(0);
try {
  await runTests({
    version: '1.100.3',
    extensionDevelopmentPath: root,
    extensionTestsPath: path.join(root, 'out/desktop/index.js'),
    launchArgs: [path.join(root, 'demo'), '--disable-extensions', '--disable-workspace-trust'],
  });
} catch (err) {
  console.error(`desktop tests failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
}
