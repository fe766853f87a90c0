/** The response head of a server-sent-events answer (no proxy buffering, no caching). */
export const streamHeaders = Object.freeze({
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
});
