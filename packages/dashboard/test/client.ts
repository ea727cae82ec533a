import type { Dashboard } from '../src/index.js';

/** A browser-like client of a dashboard handler: keeps its cookies, reads a page's CSRF field and action forms. */
export class Client {
  private readonly cookies = new Map<string, string>();

  constructor(
    private readonly dashboard: Dashboard,
    private readonly headers: Record<string, string> = {},
  ) {}

  /** A GET of `path`, cookies sent and kept. */
  get(path: string): Promise<Response> {
    return this.send(path, { method: 'GET' });
  }

  /** A form POST of `fields` to `path`, cookies sent and kept. */
  post(path: string, fields: Record<string, string>, headers: Record<string, string> = {}): Promise<Response> {
    return this.send(path, {
      method: 'POST',
      body: new URLSearchParams(fields).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    });
  }

  /** The hidden fields of the form posting to `action` on the page at `path`. */
  async formOf(path: string, action: string): Promise<Record<string, string>> {
    const page = await (await this.get(path)).text();
    const at = page.indexOf(`action="${action}"`);
    if (at < 0) throw new Error(`no form posting to ${action} on ${path}`);
    const form = page.slice(at, page.indexOf('</form>', at));
    const fields: Record<string, string> = {};
    for (const m of form.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
      fields[m[1] as string] = m[2] as string;
    }
    return fields;
  }

  private async send(path: string, init: RequestInit): Promise<Response> {
    const cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const response = await this.dashboard(
      new Request(`http://127.0.0.1:4620${path}`, {
        ...init,
        headers: { ...this.headers, ...(cookie ? { cookie } : {}), ...(init.headers as Record<string, string>) },
        redirect: 'manual',
      }),
    );
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = (pair as string).indexOf('=');
      this.cookies.set((pair as string).slice(0, at), (pair as string).slice(at + 1));
    }
    return response;
  }
}
