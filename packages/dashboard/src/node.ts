import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
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
