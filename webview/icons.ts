/**
 * The chat's icons, drawn inline as 16×16 SVG in `currentColor`, in the
 * manner of VS Code's codicons: the webview's CSP loads no font but its own,
 * and an inline SVG needs nothing loaded at all. Each is decoration only:
 * the button or text beside it carries the accessible name.
 */
const PATHS = {
  thumbsUp: 'M5 7v7H2.5V7H5zm1 0 3-5c1 0 2 .7 1.7 2L10 6.5h3.2c.8 0 1.4.8 1.2 1.6l-1.3 5A1.3 1.3 0 0 1 11.9 14H6V7z',
  thumbsDown: 'M5 9V2H2.5v7H5zm1 0 3 5c1 0 2-.7 1.7-2L10 9.5h3.2c.8 0 1.4-.8 1.2-1.6l-1.3-5A1.3 1.3 0 0 0 11.9 2H6v7z',
  copy: 'M5 1.5h6.5L14 4v8.5H5v-11zm1 1v9h7V4.5h-2v-2H6zM2 4.5h2v1H3v9h7v-1h1v2H2v-11z',
  check: 'M13.6 4.2 6.5 11.3 2.8 7.6l-.8.8 4.5 4.5 7.9-7.9-.8-.8z',
  arrowUp: 'M8 2.3 3.2 7.1l.7.7L7.5 4.2V14h1V4.2l3.6 3.6.7-.7L8 2.3z',
  arrowDown: 'M8 13.7l4.8-4.8-.7-.7-3.6 3.6V2h-1v9.8L3.9 8.2l-.7.7L8 13.7z',
  close: 'm8 8.7 3.6 3.6.7-.7L8.7 8l3.6-3.6-.7-.7L8 7.3 4.4 3.7l-.7.7L7.3 8l-3.6 3.6.7.7L8 8.7z',
  error: 'M8 1.5a6.5 6.5 0 1 1 0 13 6.5 6.5 0 0 1 0-13zm0 1a5.5 5.5 0 1 0 0 11 5.5 5.5 0 0 0 0-11zM7.5 4.5h1v4.5h-1V4.5zm0 5.5h1v1.2h-1V10z',
  warning: 'M8 1.8 15 14H1L8 1.8zm0 2L2.7 13h10.6L8 3.8zM7.5 6.5h1v3.7h-1V6.5zm0 4.5h1v1.1h-1V11z',
  info: 'M8 1.5a6.5 6.5 0 1 1 0 13 6.5 6.5 0 0 1 0-13zm0 1a5.5 5.5 0 1 0 0 11 5.5 5.5 0 0 0 0-11zM7.5 7h1v4.5h-1V7zm0-2.2h1V6h-1V4.8z',
} as const;

export type IconName = keyof typeof PATHS;

const SVG = 'http://www.w3.org/2000/svg';

export function icon(name: IconName): SVGSVGElement {
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('viewBox', '0 0 16 16');
  svg.setAttribute('width', '16');
  svg.setAttribute('height', '16');
  svg.setAttribute('aria-hidden', 'true');
  svg.setAttribute('focusable', 'false');
  svg.classList.add('icon', `icon-${name}`);
  const path = document.createElementNS(SVG, 'path');
  path.setAttribute('d', PATHS[name]);
  path.setAttribute('fill', 'currentColor');
  path.setAttribute('fill-rule', 'evenodd');
  svg.append(path);
  return svg;
}
