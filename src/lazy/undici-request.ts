// undici's index (fetch, WebSocket, caches, mocks), loaded by import() when a JWKS is fetched
// or a webhook guardrail calls out (see README.md here, ADR 0016).
export { request } from 'undici';
