import type { UsageObject } from '../../streaming/chat-chunk.ts';
import { isJsonObject } from '../../core/json.ts';

/**
 * Token usage of a realtime session: the sum of the `usage` of every `response.done` event
 * the upstream sent, recorded once when the session ends (one session, one usage record).
 */
export class RealtimeUsage {
  private input = 0;
  private output = 0;
  private total = 0;
  private cached = 0;
  private responses = 0;

  /**
   * Observes one text frame from the upstream. Only `response.done` events are parsed; the
   * many audio deltas of a session are skipped by a byte search first.
   */
  observe(frame: Buffer | string): void {
    if (!frame.includes('response.done')) return;
    let event: unknown;
    try {
      event = JSON.parse(typeof frame === 'string' ? frame : frame.toString('utf8'));
    } catch {
      return;
    }
    if (!isJsonObject(event) || event['type'] !== 'response.done' || !isJsonObject(event['response'])) return;
    const usage = event['response']['usage'];
    if (!isJsonObject(usage)) return;
    const input = count(usage['input_tokens']);
    const output = count(usage['output_tokens']);
    this.input += input;
    this.output += output;
    this.total += count(usage['total_tokens']) || input + output;
    this.cached += isJsonObject(usage['input_token_details']) ? count(usage['input_token_details']['cached_tokens']) : 0;
    this.responses += 1;
  }

  /** The session's usage in the chat shape the usage records read, or null when none was reported. */
  summary(): UsageObject | null {
    if (this.responses === 0) return null;
    return {
      prompt_tokens: this.input,
      completion_tokens: this.output,
      total_tokens: this.total,
      prompt_tokens_details: { cached_tokens: this.cached },
    };
  }
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0;
}
