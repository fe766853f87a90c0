import type { WebSocket } from 'ws';
import { callCodec, relayed } from './call-codec.ts';

/** `GET /v1/realtime`: one upgraded session per request, relayed until either side closes; its usage reported at the end. */
export const realtimeCodec = callCodec<WebSocket>('/v1/realtime', relayed);
