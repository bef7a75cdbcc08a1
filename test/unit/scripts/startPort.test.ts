import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DEFAULT_LOCAL_SERVERS } from '../../../src/core/provider/localServers';

const root = path.resolve(__dirname, '..', '..', '..');
const script = fs.readFileSync(path.join(root, 'scripts', 'start.sh'), 'utf8');

describe('npm start: code-server on a port no model server is looked for on', () => {
  it('its default port is none of the ports Candor probes for local model servers (8080 was llama.cpp\'s)', () => {
    const port = Number(/port="\$\{PORT:-(\d+)\}"/.exec(script)?.[1]);
    assert.ok(Number.isInteger(port) && port > 0, 'the script names a default port');
    assert.ok(!DEFAULT_LOCAL_SERVERS.some((s) => s.port === port), `${port} is probed by Select Model`);
  });

  it('the ports it keeps clear of are the manifest\'s, read as the script reads them', () => {
    const line = script.split('\n').find((l) => l.startsWith('probe_ports='));
    assert.ok(line, 'the script reads the probed ports from package.json');
    const out = execFileSync('bash', ['-c', `${line}\nprintf '%s' "$probe_ports"`], { cwd: root, encoding: 'utf8' });
    assert.equal(out, DEFAULT_LOCAL_SERVERS.map((s) => s.port).join(' '));
  });
});
