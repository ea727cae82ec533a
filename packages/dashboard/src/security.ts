/** The cookie that carries the token after a `?token=` visit. */
export const TOKEN_COOKIE = 'docket_token';
/** The cookie a form's `csrf` field is derived from. */
export const CSRF_COOKIE = 'docket_csrf';

/** Reads one cookie of a request (`null` when absent). */
export function readCookie(request: Request, name: string): string | null {
  const header = request.headers.get('cookie');
  if (header === null) return null;
  for (const part of header.split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === name) {
      try {
        return decodeURIComponent(part.slice(at + 1).trim());
      } catch {
        return null; // a malformed escape: as if the cookie were not there
      }
    }
  }
  return null;
}

/** Host names a dashboard always answers to: this machine's loopback names. */
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

/**
 * Whether a request's host name is one the dashboard serves: loopback, or one the user listed (`*` lists every
 * host). Anything else is refused, so that a page on another site cannot reach the dashboard by DNS rebinding.
 */
export function hostAllowed(hostname: string, allowed: readonly string[]): boolean {
  const name = hostname.toLowerCase();
  return LOOPBACK_HOSTS.has(name) || allowed.includes('*') || allowed.includes(name);
}

/** A same-site redirect target: the path with its leading slashes made one, so it can never name another host. */
export function localPath(pathname: string, search: string): string {
  return `/${pathname.replace(/^[/\\]+/, '')}${search}`;
}

/** A cookie only this dashboard's pages send back: HttpOnly, SameSite=Strict, scoped to its path. */
export function cookie(name: string, value: string, path: string): string {
  return `${name}=${encodeURIComponent(value)}; Path=${path || '/'}; HttpOnly; SameSite=Strict`;
}

/** Compares two strings in time that depends only on their lengths. */
export function sameText(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/** Whether the request carries the token: as a bearer header or as the cookie a `?token=` visit set. */
export function hasToken(request: Request, token: string): boolean {
  const header = request.headers.get('authorization');
  if (header?.startsWith('Bearer ') && sameText(header.slice(7), token)) return true;
  const fromCookie = readCookie(request, TOKEN_COOKIE);
  return fromCookie !== null && sameText(fromCookie, token);
}

/** Random bytes as hex, from Web Crypto. */
export function randomHex(bytes: number): string {
  const buffer = crypto.getRandomValues(new Uint8Array(bytes));
  return [...buffer].map((b) => b.toString(16).padStart(2, '0')).join('');
}

/**
 * CSRF tokens: a form's `csrf` field is an HMAC of the browser's `docket_csrf` cookie under a key this dashboard
 * drew at creation, so another site can neither read nor forge it.
 */
export class CsrfKey {
  private readonly key: ReturnType<typeof crypto.subtle.importKey>;

  constructor() {
    this.key = crypto.subtle.importKey(
      'raw',
      crypto.getRandomValues(new Uint8Array(32)),
      { name: 'HMAC', hash: 'SHA-256' },
      false,
      ['sign'],
    );
  }

  /** The `csrf` field for forms shown to the browser holding `cookieValue`. */
  async tokenFor(cookieValue: string): Promise<string> {
    const signature = await crypto.subtle.sign('HMAC', await this.key, new TextEncoder().encode(cookieValue));
    return [...new Uint8Array(signature)].map((b) => b.toString(16).padStart(2, '0')).join('');
  }

  /** Whether a posted `csrf` field belongs to the request's cookie. */
  async verify(request: Request, field: unknown): Promise<boolean> {
    const value = readCookie(request, CSRF_COOKIE);
    if (value === null || typeof field !== 'string') return false;
    return sameText(field, await this.tokenFor(value));
  }
}

/** Headers every answer carries: no script but the dashboard's own, no framing, no caching, no referrer to other sites. */
export const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  'cache-control': 'no-store',
};
