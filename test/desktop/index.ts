import Mocha from 'mocha';
import { registerActivationSuite } from './activation.test';

/** Entry point @vscode/test-electron loads inside the desktop extension host. */
export function run(): Promise<void> {
  const mocha = new Mocha({ ui: 'bdd', timeout: 60_000, color: true });
  mocha.suite.emit('pre-require', globalThis, 'desktop', mocha);
  registerActivationSuite();
  return new Promise((resolve, reject) => {
    mocha.run((failures) => (failures > 0 ? reject(new Error(`${failures} desktop test(s) failed`)) : resolve()));
  });
}
