// The chat as the chat controller wires it: the conversation from
// `openConversation`, and the view following the session's one live mapping
// of its records (`TranscriptPages`) beside the conversation's own events.
import type { Conversation } from '../../../../src/core/chat/conversation';
import { openConversation, type ConversationPorts } from '../../../../src/core/chat/openConversation';
import type { ChatEvent } from '../../../../src/core/chat/ports';
import { TranscriptPages } from '../../../../src/core/session/pages';
import type { Session } from '../../../../src/core/session/session';

/** `post` is told what the view is sent, in order: the entry of each record appended from now on, and each event of the conversation. */
export function openChat(session: Session, ports: Omit<ConversationPorts, 'emit'>, post: (event: ChatEvent) => void): Conversation {
  new TranscriptPages(session).onEntry((entry) => post({ type: 'entry', entry }));
  return openConversation(session, { ...ports, emit: post });
}
