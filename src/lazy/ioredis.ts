// Loaded by import() when a Redis store is configured (see README.md here, ADR 0016).
export { Redis } from 'ioredis';
