import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { contents, read, removeTempDirs, repoWith, tempDir, viewOf, write } from './helpers';

/** Ignored folders: bound read-only or made empty, never copied; what is never bound. */
describe('workspace view: ignored folders', function () {
  this.timeout(30_000);
  after(removeTempDirs);

  const ignoring = (rules: string): string => repoWith({ '.gitignore': rules, 'src/main.py': 'print(1)\n', 'pkg/index.js': 'module.exports = 1;\n' });

  it('binds dependency folders at any depth, read-only from the workspace, and copies none of their files', async () => {
    const repo = ignoring('node_modules/\n.venv/\nvendor/\n');
    write(repo, 'node_modules/left-pad/index.js', 'pad\n');
    write(repo, 'pkg/node_modules/dep/index.js', 'dep\n');
    write(repo, '.venv/bin/python', '#!\n');
    write(repo, 'vendor/lib.go', 'package lib\n');
    const { view, viewDir } = await viewOf(repo);
    await view.refresh();
    const { readOnly } = view.mounts();
    assert.deepEqual(readOnly, ['.venv', 'node_modules', 'pkg/node_modules', 'vendor'].map((rel) => ({ source: path.join(repo, rel), dest: path.join(repo, rel) })));
    assert.deepEqual([...contents(viewDir).keys()].filter((rel) => /node_modules|\.venv|vendor/.test(rel)), [], 'nothing of them is copied');
    for (const rel of ['node_modules', 'pkg/node_modules', '.venv', 'vendor']) {
      assert.deepEqual(fs.readdirSync(path.join(viewDir, rel)), [], `${rel} is an empty mount point in the view`);
    }
  });

  it('gives caches a tmpfs: node_modules/.cache, node_modules/.vite and every __pycache__, only where they exist', async () => {
    const repo = ignoring('node_modules/\n__pycache__/\n');
    write(repo, 'node_modules/.cache/babel/x', 'c\n');
    write(repo, 'node_modules/.vite/deps/y', 'v\n');
    write(repo, 'src/__pycache__/main.cpython-312.pyc', 'pyc');
    write(repo, 'src/deep/er/__pycache__/m.pyc', 'pyc');
    const { view, viewDir } = await viewOf(repo);
    await view.refresh();
    assert.deepEqual(view.mounts().tmpfs, ['node_modules/.cache', 'node_modules/.vite', 'src/__pycache__', 'src/deep/er/__pycache__'].map((rel) => path.join(repo, rel)));
    assert.deepEqual(fs.readdirSync(path.join(viewDir, 'src/__pycache__')), []);
  });

  it('build outputs start empty in the view and stay writable there; more names can be bound', async () => {
    const repo = ignoring('dist/\nbuild/\ntarget/\n.next/\nthird_party/\n');
    for (const rel of ['dist/app.js', 'build/out.o', 'target/debug/app', '.next/cache/x', 'third_party/lib.c']) write(repo, rel, 'stale output\n');
    const { view, viewDir } = await viewOf(repo, { bindIgnored: ['third_party'] });
    await view.refresh();
    for (const rel of ['dist', 'build', 'target', '.next']) assert.deepEqual(fs.readdirSync(path.join(viewDir, rel)), [], `${rel} is empty in the view`);
    assert.deepEqual(view.mounts().readOnly, [{ source: path.join(repo, 'third_party'), dest: path.join(repo, 'third_party') }]);
    write(viewDir, 'dist/app.js', 'built in the view\n');
    await view.refresh();
    assert.equal(read(viewDir, 'dist/app.js'), 'built in the view\n', 'a build in the view keeps its output across refreshes');
    assert.equal(read(repo, 'dist/app.js'), 'stale output\n');
  });

  it('never binds or copies an ignored .env, even named as a folder to bind', async () => {
    const repo = ignoring('.env\n.env.local\n.envs/\n');
    write(repo, '.env', 'API_KEY=secret\n');
    write(repo, '.env.local', 'TOKEN=secret\n');
    write(repo, '.envs/prod', 'KEY=secret\n');
    const { view, viewDir } = await viewOf(repo, { bindIgnored: ['.envs', '.env'] });
    const report = await view.refresh([{ path: '.env', bytes: Buffer.from('API_KEY=from an unsaved buffer\n') }]);
    assert.deepEqual([...contents(viewDir).keys()].filter((rel) => rel.includes('.env')), []);
    assert.deepEqual(view.mounts(), { readOnly: [], tmpfs: [] });
    assert.ok(report.notes.some((n) => n.includes('".env"') && n.includes('ignored')), report.notes.join('\n'));
  });

  it('does not bind a symlinked node_modules that points into the home or a hidden folder, and says why', async () => {
    const repo = ignoring('node_modules\nvendor\n');
    const hidden = tempDir('candor-hidden-');
    fs.mkdirSync(path.join(hidden, 'shared', 'node_modules'), { recursive: true });
    fs.symlinkSync(path.join(hidden, 'shared', 'node_modules'), path.join(repo, 'node_modules'));
    fs.symlinkSync(os.homedir(), path.join(repo, 'vendor'));
    const { view, viewDir } = await viewOf(repo, { hidden: [hidden] });
    const report = await view.refresh();
    assert.deepEqual(view.mounts().readOnly, []);
    assert.ok(report.notes.some((n) => n.startsWith('node_modules points to') && n.includes(hidden)), report.notes.join('\n'));
    assert.ok(report.notes.some((n) => n.startsWith('vendor points to') && n.includes(os.homedir())), report.notes.join('\n'));
    assert.equal(fs.lstatSync(path.join(viewDir, 'node_modules'), { throwIfNoEntry: false }), undefined, 'the link itself is not copied either (git ignores it)');
  });

  it('binds a symlinked dependency folder by its real path when that stays clear of hidden folders', async () => {
    const repo = ignoring('node_modules\n');
    const store = tempDir('candor-store-');
    fs.symlinkSync(store, path.join(repo, 'node_modules'));
    const { view } = await viewOf(repo);
    await view.refresh();
    assert.deepEqual(view.mounts().readOnly, [{ source: store, dest: path.join(repo, 'node_modules') }]);
  });

  it('notices a dependency folder that appears after the first build (npm install)', async () => {
    const repo = ignoring('node_modules/\n');
    const { view } = await viewOf(repo);
    await view.refresh();
    assert.deepEqual(view.mounts().readOnly, []);
    write(repo, 'pkg/node_modules/dep/index.js', 'dep\n');
    await view.refresh();
    assert.deepEqual(view.mounts().readOnly, [{ source: path.join(repo, 'pkg/node_modules'), dest: path.join(repo, 'pkg/node_modules') }]);
    fs.rmSync(path.join(repo, 'pkg/node_modules'), { recursive: true });
    await view.refresh();
    assert.deepEqual(view.mounts().readOnly, [], 'and one that goes away');
  });
});
