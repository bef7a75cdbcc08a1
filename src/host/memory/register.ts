import type { DisposableStore } from '../platform/lifecycle';
import type { Ports } from '../ports';
import { MemoryFeature } from './memory';

/** The workspace memory: its commands, and what the chat's tools and system prompt read of it. */
export function registerMemory(store: DisposableStore, ports: Ports): MemoryFeature {
  return store.add(new MemoryFeature(ports));
}
