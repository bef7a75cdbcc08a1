import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';

/**
 * The HTML shell of Candor's webviews: CSP from `default-src 'none'`, a nonce
 * from a CSPRNG on the script and the stylesheet, resources only from dist/.
 */
export function webviewPage(webview: vscode.Webview, dist: vscode.Uri, page: { title: string; script: string; style: string; body: string; extraStyleSources?: string[] }): string {
  const nonce = randomBytes(16).toString('base64');
  const script = webview.asWebviewUri(vscode.Uri.joinPath(dist, page.script));
  const style = webview.asWebviewUri(vscode.Uri.joinPath(dist, page.style));
  const csp = [
    "default-src 'none'",
    [`style-src ${webview.cspSource} 'nonce-${nonce}'`, ...(page.extraStyleSources ?? [])].join(' '),
    `font-src ${webview.cspSource}`,
    `img-src ${webview.cspSource} data:`,
    `script-src 'nonce-${nonce}'`,
  ].join('; ');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${style}" nonce="${nonce}">
<title>${page.title}</title>
</head>
<body>
${page.body}
<script nonce="${nonce}" src="${script}"></script>
</body>
</html>`;
}

/** A short, safe rendering of an untrusted message for the log. */
export function safePreview(raw: unknown): string {
  try {
    return JSON.stringify(raw).slice(0, 200);
  } catch {
    return String(raw).slice(0, 200);
  }
}
