import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getRequestListener, serve } from '@hono/node-server';
import type { Dashboard } from './create-dashboard.js';

/** A dashboard served by Node's HTTP server: its URL, and `close()` to stop serving. */
export interface ServedDashboard {
  url: string;
  close(): Promise<void>;
}

/** Serves a dashboard on `host:port` (default 127.0.0.1:4620; port 0 picks a free one) until `close()`. */
export function serveDashboard(
  dashboard: Dashboard,
  options: { port?: number; host?: string; basePath?: string } = {},
): Promise<ServedDashboard> {
  const host = options.host ?? '127.0.0.1';
  return new Promise((resolve, reject) => {
    const server = serve({ fetch: dashboard, port: options.port ?? 4620, hostname: host }, (info: AddressInfo) => {
      const shown = host.includes(':') ? `[${host}]` : host;
      resolve({
        url: `http://${shown}:${info.port}${options.basePath ?? ''}/`,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            (server as Server).closeAllConnections?.();
          }),
      });
    });
    server.once('error', reject);
  });
}

/**
 * The dashboard as a Node `(req, res)` listener, for Express, Fastify or `http.createServer`: mount it where the
 * request's URL still holds the dashboard's `basePath` (in Express 5, `app.all('/docket{/*rest}', listener)`).
 */
export function nodeListener(dashboard: Dashboard): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const listener = getRequestListener(dashboard);
  return (req, res) => listener(req, res);
}
