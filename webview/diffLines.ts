/** How each line of a unified diff is shown. */
export type DiffLineKind = 'file' | 'hunk' | 'added' | 'removed' | 'meta' | 'context';

/**
 * The kind of each line of a unified diff. The file headers (`diff`,
 * `index`, `---`, `+++`) come only before a file's first hunk: inside a
 * hunk, a removed line that reads `-- note` is `--- note`, and an added
 * `++i;` is `+++i;`, and both are changes, not headers.
 */
export function diffLineKinds(lines: readonly string[]): DiffLineKind[] {
  let inHunk = false;
  return lines.map((text) => {
    if (text.startsWith('@@')) {
      inHunk = true;
      return 'hunk';
    }
    // A new file's header follows the last hunk of the one before.
    if (text.startsWith('diff ')) inHunk = false;
    if (!inHunk && (text.startsWith('+++ ') || text.startsWith('--- ') || text.startsWith('diff ') || text.startsWith('index '))) return 'file';
    if (text.startsWith('+')) return 'added';
    if (text.startsWith('-')) return 'removed';
    if (text.startsWith('\\')) return 'meta';
    return 'context';
  });
}
