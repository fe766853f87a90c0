// Loaded by import() on Bedrock's first signed request (see README.md here, ADR 0016).
export { Hash } from '@smithy/hash-node';
export { SignatureV4 } from '@smithy/signature-v4';
