import { icon } from './icons';
import { iconButton } from './toolkit';

/**
 * Puts `text` on the clipboard: the async Clipboard API where the webview
 * may use it, else a selection copied the old way.
 */
async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    const area = document.createElement('textarea');
    area.value = text;
    area.setAttribute('readonly', '');
    area.className = 'offscreen';
    document.body.append(area);
    area.select();
    const done = document.execCommand('copy');
    area.remove();
    return done;
  }
}

/** How long a copy button says "Copied". */
const COPIED_MS = 1500;

/** A button that copies `text()`, and says so (icon and name) for a moment. */
export function copyButton(name: string, text: () => string): HTMLElement {
  const button = iconButton('copy', name, () => {
    void copyText(text()).then((ok) => {
      const said = ok ? 'Copied' : 'Copy failed';
      button.setAttribute('aria-label', said);
      button.setAttribute('title', said);
      button.replaceChildren(icon(ok ? 'check' : 'error'));
      setTimeout(() => {
        button.setAttribute('aria-label', name);
        button.setAttribute('title', name);
        button.replaceChildren(icon('copy'));
      }, COPIED_MS);
    });
  });
  button.classList.add('copy');
  return button;
}
