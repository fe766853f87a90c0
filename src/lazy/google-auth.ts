// Loaded by import() on a Vertex instance's first token (see README.md here, ADR 0016).
export { GoogleAuth } from 'google-auth-library';
