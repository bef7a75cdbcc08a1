// The e2e harness in one import: `import { useWorkbench, runCommand } from './harness'`.
export * from './browser';
export * from './codeServer';
export * from './fixtures';
export * from './suite';
export * from './axe';
