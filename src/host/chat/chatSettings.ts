import type { ChatSettings } from '../../core/chat/ports';
import type { CandorSettings } from '../settings/config';
import type { Providers } from '../provider/provider';

/**
 * What the chat loop is told of the settings in force: the window (the
 * smaller of the user's and the server's, both kept so the chat and the
 * tooltip can name them), the compaction settings, the output limit, and
 * what the local server said of itself (docs/architecture.md, "Local model
 * servers"). Read afresh for every request.
 */
export function chatSettingsOf(providers: Providers, s: CandorSettings): ChatSettings {
  const window = providers.contextWindow(s);
  const kind = providers.serverKind(s);
  return {
    contextWindow: window.tokens,
    windowSource: window.source,
    ...(window.server !== undefined ? { serverWindow: window.server } : {}),
    ...(window.setting !== undefined ? { windowSetting: window.setting } : {}),
    thresholdPercent: s.thresholdPercent,
    keepTurns: s.keepTurns,
    maxOutputTokens: s.maxOutputTokens,
    ...(kind ? { serverKind: kind } : {}),
    preserveReasoning: providers.serverFacts(s).preserveReasoning === true,
  };
}
