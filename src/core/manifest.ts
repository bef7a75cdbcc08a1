import { contributes } from '../../package.json';
import type { Inspect } from './settings/resolve';

/**
 * The defaults of `candor.*`, read from the manifest VS Code reads them from
 * (`contributes.configuration`): the one place they are written down. The
 * extension gets them through `inspect().defaultValue`; the CLI, the
 * fallbacks of `resolveCandorSettings` and the core's `DEFAULT_*` constants
 * read them here (docs/architecture.md, "Settings and trust").
 */

const properties: Readonly<Record<string, { readonly default?: unknown }>> = contributes.configuration.properties;

/** The manifest's default of `candor.<key>`; undefined when the manifest declares none. */
export function manifestDefault(key: string): unknown {
  return properties[`candor.${key}`]?.default;
}

/** The manifest's numeric default of `candor.<key>`; a missing one is a bug in the manifest, found at load. */
export function manifestNumber(key: string): number {
  const value = manifestDefault(key);
  if (typeof value !== 'number' || !Number.isFinite(value)) throw new Error(`package.json declares no numeric default for candor.${key}`);
  return value;
}

/** The manifest's default of `candor.<key>`, a list of strings; a missing one is a bug in the manifest, found at load. */
export function manifestStrings(key: string): readonly string[] {
  const value = manifestDefault(key);
  if (!Array.isArray(value) || !value.every((entry) => typeof entry === 'string')) throw new Error(`package.json declares no list of strings as the default of candor.${key}`);
  return value;
}

/** What `inspect()` reports where nothing is set: the manifest's default only (the CLI's settings). */
export const manifestDefaults: Inspect = <T>(key: string) => ({ defaultValue: manifestDefault(key) as T | undefined });
