/**
 * A compact JWS: three base64url parts. Anything else goes on to the managed-key path. Apart
 * from jwt-verifier.ts, so that the authenticator does not load jose when no issuer is set.
 */
export function looksLikeJwt(token: string): boolean {
  const first = token.indexOf('.');
  return first > 0 && token.indexOf('.', first + 1) > first + 1 && token.split('.').length === 3;
}
