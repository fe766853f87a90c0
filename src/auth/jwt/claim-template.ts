import type { JWTPayload } from 'jose';

type Part = { readonly text: string } | { readonly claim: string };

const placeholder = /\{claims\.([A-Za-z0-9_.-]+)\}/g;

/** Why a claim template cannot be filled from a token. */
export class MissingClaimError extends Error {
  readonly claim: string;

  constructor(claim: string) {
    super(`the token has no usable "${claim}" claim, which the issuer's user_path needs`);
    this.name = 'MissingClaimError';
    this.claim = claim;
  }
}

/**
 * A user-path template such as `/orgs/{claims.org}/users/{claims.sub}`. A claim fills one
 * segment: a string or number without `/`, so that a token cannot climb into another path.
 */
export class ClaimTemplate {
  private readonly parts: readonly Part[];

  constructor(template: string) {
    const parts: Part[] = [];
    let last = 0;
    for (const match of template.matchAll(placeholder)) {
      if (match.index > last) parts.push({ text: template.slice(last, match.index) });
      parts.push({ claim: match[1] ?? '' });
      last = match.index + match[0].length;
    }
    if (last < template.length) parts.push({ text: template.slice(last) });
    const rest = parts.flatMap((part) => ('text' in part ? [part.text] : []));
    if (rest.some((text) => text.includes('{') || text.includes('}'))) {
      throw new Error(`expected placeholders written {claims.NAME}: ${template}`);
    }
    this.parts = parts;
  }

  fill(payload: JWTPayload): string {
    let result = '';
    for (const part of this.parts) result += 'text' in part ? part.text : claimSegment(payload, part.claim);
    return result;
  }
}

function claimSegment(payload: JWTPayload, claim: string): string {
  const value = payload[claim];
  const text = typeof value === 'string' ? value.trim() : typeof value === 'number' && Number.isFinite(value) ? String(value) : '';
  if (text === '' || text.includes('/')) throw new MissingClaimError(claim);
  return text;
}

/** An allowlist claim (models, endpoints): an array of strings, or one string separated by spaces or commas. */
export function modelsOfClaim(payload: JWTPayload, claim: string): readonly string[] {
  const value = payload[claim];
  if (Array.isArray(value)) return value.filter((item): item is string => typeof item === 'string' && item.trim() !== '');
  if (typeof value === 'string') return value.split(/[\s,]+/).filter((item) => item !== '');
  return [];
}
