import { chatCodec } from './chat.ts';

/** Gemini's `:generateContent` and `:streamGenerateContent`: translated to chat, run as chat under their own names. */
export const generateContentCodec = chatCodec('/v1beta/models:generateContent');
export const streamGenerateContentCodec = chatCodec('/v1beta/models:streamGenerateContent');
