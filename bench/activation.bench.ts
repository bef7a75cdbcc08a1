// Activation of the packaged extension in code-server, and the size of its
// host bundle, for two VSIX files side by side (a change against its base):
//   npm run bench -- activation [A.vsix B.vsix]
// Without arguments it compares the packaged VSIX of this checkout with
// itself (a noise floor). Starts are interleaved A, B, A, B… so that load on
// the machine falls on both alike; the figure is Candor's own
// "activated in N ms" log line (building the services), and the time from
// opening the workbench until the gauge shows.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { execFileSync } from 'node:child_process';
import { openWorkbench, statusBarItem } from '../test/e2e/harness/browser';
import { startVsCode } from '../test/e2e/harness/codeServer';
import { packagedVsix } from '../test/e2e/harness/suite';

const STARTS = 5;

interface Sample {
  readonly activatedMs: number;
  readonly gaugeMs: number;
}

async function oneStart(vsix: string): Promise<Sample> {
  const workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'candor-activation-'));
  fs.writeFileSync(path.join(workspace, 'README.md'), '# activation\n');
  const vs = await startVsCode({ workspace, vsix, settings: { 'candor.dataDir': `${workspace}-data` } });
  try {
    const started = performance.now();
    const wb = await openWorkbench(vs.url, workspace);
    try {
      await statusBarItem(wb.page, 'candor.gauge').waitFor({ state: 'visible', timeout: 90_000 });
      const gaugeMs = performance.now() - started;
      let activatedMs = NaN;
      for (let i = 0; i < 50 && Number.isNaN(activatedMs); i++) {
        const match = /activated in (\d+) ms/.exec(vs.candorLog());
        if (match) activatedMs = Number(match[1]);
        else await new Promise((r) => setTimeout(r, 100));
      }
      return { activatedMs, gaugeMs };
    } finally {
      await wb.close();
    }
  } finally {
    await vs.stop();
    fs.rmSync(workspace, { recursive: true, force: true });
    fs.rmSync(`${workspace}-data`, { recursive: true, force: true });
  }
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
}

/** The uncompressed size of dist/extension.js inside a VSIX (a zip). */
function hostBundleBytes(vsix: string): number {
  const script = 'import sys, zipfile; print(zipfile.ZipFile(sys.argv[1]).getinfo("extension/dist/extension.js").file_size)';
  return Number(execFileSync('python3', ['-c', script, vsix], { encoding: 'utf8' }).trim());
}

export async function run(args: readonly string[] = process.argv.slice(3)): Promise<void> {
  const a = args[0] ?? packagedVsix();
  const b = args[1] ?? a;
  const samples: Record<'a' | 'b', Sample[]> = { a: [], b: [] };
  for (let i = 0; i < STARTS; i++) {
    samples.a.push(await oneStart(a));
    samples.b.push(await oneStart(b));
  }
  const row = (label: string, file: string, list: Sample[]): string =>
    `${label}: host bundle ${(hostBundleBytes(file) / 1024).toFixed(1)} KB, activate ${median(list.map((s) => s.activatedMs))} ms, gauge shown after ${median(list.map((s) => s.gaugeMs)).toFixed(0)} ms (medians of ${STARTS})`;
  console.log(row(`A ${path.basename(a)}`, a, samples.a));
  console.log(row(`B ${path.basename(b)}`, b, samples.b));
  const ratio = median(samples.b.map((s) => s.activatedMs)) / median(samples.a.map((s) => s.activatedMs));
  console.log(`B/A: bundle ${(hostBundleBytes(b) / hostBundleBytes(a)).toFixed(3)}×, activation ${ratio.toFixed(2)}×`);
}
