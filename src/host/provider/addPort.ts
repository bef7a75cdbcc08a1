import * as vscode from 'vscode';
import type { Logger } from '../../core/log';
import { identifyServer } from '../../core/provider/discovery';
import { formatLocalServer, serverPlace, type LocalServer } from '../../core/provider/localServers';
import { parsePortInput, withServerAdded } from '../../core/provider/pickerInputs';
import type { Settings } from '../settings/config';

/**
 * Select Model's "Add a port…": the user types a port, Candor asks what
 * answers there on 127.0.0.1 (a model list first, then what tells the kinds
 * apart: `identifyServer`) and adds `"PORT KIND"` to the user's
 * `candor.localServers`, so nobody edits JSON to reach a server on another
 * port. Nothing that answers as a model server: the user is told what did
 * answer, and may try again or add the port anyway. Returns whether the
 * setting changed.
 */
export async function addPort(settings: Settings, log: Logger): Promise<boolean> {
  const listed = settings.read().localServers;
  let value = '';
  for (;;) {
    const typed = await vscode.window.showInputBox({
      title: 'Candor: Add a Port',
      prompt: 'The port a model server listens on, on this machine (127.0.0.1). Candor asks it what it is and adds it to candor.localServers.',
      placeHolder: 'e.g. 18200',
      value,
      ignoreFocusOut: true,
      // An empty box says nothing yet; anything typed is checked as it is typed.
      validateInput: (text) => (text.trim() === '' ? undefined : problemOf(parsePortInput(text, listed))),
    });
    if (typed === undefined || typed.trim() === '') return false;
    const input = parsePortInput(typed, listed);
    if ('problem' in input) return false;
    const found = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `Candor: asking 127.0.0.1:${input.port} what it is…` },
      () => identifyServer(input.port),
    );
    if ('kind' in found) {
      await addServer({ port: input.port, kind: found.kind, sendKey: false }, log);
      if (found.models.length === 0) void vscode.window.showInformationMessage(`${serverPlace({ port: input.port, kind: found.kind })} lists no model yet: load one there, then open Select Model again.`);
      return true;
    }
    const answer = await vscode.window.showWarningMessage(
      `Nothing on 127.0.0.1:${input.port} answered as a model server (GET /v1/models: ${found.failure}). Start the server and try again, or add the port anyway.`,
      'Try Again',
      'Add Anyway',
    );
    if (answer === 'Add Anyway') {
      await addServer({ port: input.port, kind: 'openai', sendKey: false }, log);
      return true;
    }
    if (answer !== 'Try Again') return false;
    value = typed;
  }
}

function problemOf(input: ReturnType<typeof parsePortInput>): string | undefined {
  return 'problem' in input ? input.problem : undefined;
}

/** The user's own list, with the new entry last (the defaults written out when the user had no list: a user value replaces them). */
async function addServer(server: LocalServer, log: Logger): Promise<void> {
  const config = vscode.workspace.getConfiguration('candor');
  const inspected = config.inspect<unknown>('localServers');
  await config.update('localServers', withServerAdded(inspected?.globalValue, inspected?.defaultValue, server), vscode.ConfigurationTarget.Global);
  log.info(`candor.localServers: added "${formatLocalServer(server)}" (${serverPlace(server)})`);
}
