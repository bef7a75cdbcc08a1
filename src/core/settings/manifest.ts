import { contributes } from '../../../package.json';
import type { Inspect } from './resolve';

/**
 * The defaults of `candor.*`, read from the manifest VS Code reads them from
 * (`contributes.configuration`): the one place they are written down. The
 * extension gets them through `inspect().defaultValue`; the CLI and the
 * fallbacks of `resolveCandorSettings` read them here.
 */

const properties: Readonly<Record<string, { readonly default?: unknown }>> = contributes.configuration.properties;

/** The manifest's default of `candor.<key>`; undefined when the manifest declares none. */
export function manifestDefault(key: string): unknown {
  return properties[`candor.${key}`]?.default;
}

/** What `inspect()` reports where nothing is set: the manifest's default only (the CLI's settings). */
export const manifestDefaults: Inspect = <T>(key: string) => ({ defaultValue: manifestDefault(key) as T | undefined });
