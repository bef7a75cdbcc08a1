import type { DisposableStore } from '../platform/lifecycle';
import { registerCommand } from '../platform/command';
import type { Ports } from '../ports';
import { cleanData, type CleanDataDeps } from './cleanData';

/** The data folder: Clean Up Data, which leaves the scratch clones alone while a run uses them. */
export function registerDataFolder(store: DisposableStore, ports: Ports, deps: CleanDataDeps): void {
  store.add(registerCommand('candor.cleanData', () => cleanData(ports, deps), ports.notify));
}
