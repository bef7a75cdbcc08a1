/**
 * The one place that knows about @vscode/webview-ui-toolkit. Its upstream was
 * archived in January 2025; a move to another component set touches only
 * this file.
 */
import { provideVSCodeDesignSystem, vsCodeButton, vsCodeProgressRing, vsCodeDivider } from '@vscode/webview-ui-toolkit';
import { icon, type IconName } from './icons';

export function registerToolkit(): void {
  provideVSCodeDesignSystem().register(vsCodeButton(), vsCodeProgressRing(), vsCodeDivider());
}

export type ButtonLook = 'primary' | 'secondary' | 'icon';

export function button(label: string, look: ButtonLook, onClick: () => void, accessibleName = label): HTMLElement {
  const el = document.createElement('vscode-button');
  el.setAttribute('appearance', look);
  el.setAttribute('aria-label', accessibleName);
  el.setAttribute('title', accessibleName);
  el.textContent = label;
  el.addEventListener('click', () => {
    if (!el.hasAttribute('disabled')) onClick();
  });
  return el;
}

/** A button that shows only an icon; its accessible name is also its tooltip. */
export function iconButton(name: IconName, accessibleName: string, onClick: () => void): HTMLElement {
  const el = button('', 'icon', onClick, accessibleName);
  el.append(icon(name));
  return el;
}

export function setDisabled(el: HTMLElement, disabled: boolean): void {
  if (disabled) el.setAttribute('disabled', '');
  else el.removeAttribute('disabled');
}

