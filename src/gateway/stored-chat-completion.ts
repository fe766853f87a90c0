import type { OwnershipStore } from '../ownership/ownership-store.ts';
import { ownedBy, type Caller } from '../ownership/visibility.ts';
import type { ProviderAdapter } from '../providers/provider.ts';

/** The types whose upstream keeps a chat completion sent with `store: true` (OpenAI's stored completions). */
const storingTypes: ReadonlySet<string> = new Set(['openai', 'azure']);

/**
 * What records a stored chat completion as the caller's (read back through the catalogue's
 * `/v1/chat/completions/{id}`, ADR 40): the request said `store: true` and went to an
 * OpenAI-type instance, which keeps it. Null otherwise. The same rule for a JSON answer (its
 * `id`) and a stream (its chunks' `id`, once it ended well). A failed record is logged, never
 * the client's error: the completion is then visible to admins only.
 */
export function storedCompletionRecorder(
  ownership: OwnershipStore | undefined,
  caller: Caller,
  body: unknown,
  adapter: Pick<ProviderAdapter, 'name' | 'type'>,
  log: { warn(fields: Record<string, unknown>, message: string): void },
): ((id: string) => Promise<void>) | null {
  if (ownership === undefined || !storingTypes.has(adapter.type)) return null;
  if ((body as { store?: unknown } | null)?.store !== true) return null;
  return async (id) => {
    if (id === '') return;
    await ownership
      .record(ownedBy(caller, 'chat_completion', adapter.name, id))
      .catch((error: unknown) => log.warn({ err: error, completion_id: id }, 'recording a stored chat completion failed'));
  };
}
