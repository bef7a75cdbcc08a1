import MarkdownIt from 'markdown-it';
import DOMPurify from 'dompurify';

// Raw HTML is off in the parser, and the output is sanitized again: a reply
// is text from a remote model and must never run in the webview.
const md = new MarkdownIt({ html: false, linkify: true, breaks: false });

export function renderMarkdown(text: string): string {
  return DOMPurify.sanitize(md.render(text), {
    USE_PROFILES: { html: true },
    FORBID_TAGS: ['style', 'form', 'input', 'img', 'iframe'],
    FORBID_ATTR: ['style'],
  });
}
