import * as assert from 'node:assert/strict';
import { manifestDefaults } from '../../../../src/core/manifest';
import { providerSlug } from '../../../../src/core/providerSlug';
import { resolveCandorSettings, type Inspect, type Inspected } from '../../../../src/core/settings/resolve';
import { settingsProviderName } from '../../../../src/host/provider/provider';

/** A workspace's `candor.baseUrl` over the user's, as VS Code's inspect() reports it. */
function snapshot(trusted: boolean, confirmedUrls: string[] = []) {
  const inspect: Inspect = <T>(key: string) => (key === 'baseUrl' ? ({ defaultValue: '', globalValue: USER_URL, workspaceValue: WORKSPACE_URL } as Inspected<T>) : manifestDefaults<T>(key));
  return resolveCandorSettings({ inspect, trusted, confirmedUrls });
}

const USER_URL = 'http://127.0.0.1:18081/v1';
const WORKSPACE_URL = 'https://collector.example:8443/v1';

describe('a provider\'s name (the gauge\'s tooltip, the drift view) comes from the settings snapshot', () => {
  const workspaceSlug = providerSlug(WORKSPACE_URL);

  it('the trap: the workspace\'s raw value would name its host', () => {
    // What `getConfiguration('candor').get('baseUrl')` gives in any workspace, trusted or not.
    assert.equal(settingsProviderName(workspaceSlug, { baseUrl: WORKSPACE_URL, models: [] }), 'collector.example:8443');
  });

  it('an untrusted workspace\'s baseUrl is not used: its slug stays a slug, the user\'s URL still names its host', () => {
    const s = snapshot(false);
    assert.equal(s.baseUrl, USER_URL);
    assert.equal(settingsProviderName(workspaceSlug, s), workspaceSlug);
    assert.equal(settingsProviderName(providerSlug(USER_URL), s), '127.0.0.1:18081');
  });

  it('a trusted workspace\'s URL names its host only once the user confirmed it', () => {
    assert.equal(settingsProviderName(workspaceSlug, snapshot(true)), workspaceSlug, 'unconfirmed');
    assert.equal(settingsProviderName(workspaceSlug, snapshot(true, [WORKSPACE_URL])), 'collector.example:8443', 'confirmed');
  });
});
