import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { currentUserName, type UserLookup } from '../../../../src/core/process/userName';
import { cannotChown, skipUnless } from '../../../helpers/preconditions';

/** What `os.userInfo()` throws for a uid with no passwd entry. */
const noPasswdEntry = (): never => {
  throw Object.assign(new Error('A system error occurred: uv_os_get_passwd returned ENOENT (no such file or directory)'), { code: 'ERR_SYSTEM_ERROR' });
};

describe('the name of the user the commands run as', () => {
  it('the trap: os.userInfo() throws for a uid with no passwd entry', function () {
    skipUnless(this, cannotChown());
    const child = spawnSync(process.execPath, ['-e', 'require("os").userInfo()'], { uid: 54_321, gid: 54_321, cwd: '/', encoding: 'utf8' });
    assert.notEqual(child.status, 0);
    assert.match(child.stderr, /ENOENT|uv_os_get_passwd/);
  });

  it('is the passwd name when there is one', () => {
    const lookup: UserLookup = { userInfo: () => ({ username: 'ada' }), env: { USER: 'other' }, uid: 1000 };
    assert.equal(currentUserName(lookup), 'ada');
  });

  it('with no passwd entry: $USER, else $LOGNAME, else the uid, never an exception', () => {
    assert.equal(currentUserName({ userInfo: noPasswdEntry, env: { USER: 'ci', LOGNAME: 'log' }, uid: 54_321 }), 'ci');
    assert.equal(currentUserName({ userInfo: noPasswdEntry, env: { LOGNAME: 'log' }, uid: 54_321 }), 'log');
    assert.equal(currentUserName({ userInfo: noPasswdEntry, env: { USER: '' }, uid: 54_321 }), '54321');
    assert.equal(currentUserName({ userInfo: noPasswdEntry, env: {}, uid: undefined }), 'user');
  });
});
