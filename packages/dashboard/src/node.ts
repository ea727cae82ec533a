import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DocketError } from '@docket/core';
import { getRequestListener, serve } from '@hono/node-server';
import type { Dashboard } from './create-dashboard.js';

/** A dashboard served by Node's HTTP server: its URL, and `close()` to stop serving. */
export interface ServedDashboard {
  url: string;
  close(): Promise<void>;
}

/**
 * Serves a dashboard on `host:port` (default 127.0.0.1:4620; port 0 picks a free one) until `close()`. A port in use
 * is `CONNECTION_UNAVAILABLE`; an empty host (every interface) or one this machine does not have is `CONFIG_INVALID`.
 */
export function serveDashboard(
  dashboard: Dashboard,
  options: { port?: number; host?: string; basePath?: string } = {},
): Promise<ServedDashboard> {
  const host = options.host ?? '127.0.0.1';
  if (host.trim() === '') {
    const message = 'host must name an interface: an empty host listens on every one (say 0.0.0.0 to mean that)';
    return Promise.reject(new DocketError('CONFIG_INVALID', message, { operation: 'dashboard.serve' }));
  }
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
    server.once('error', (error: NodeJS.ErrnoException) => reject(listenError(error, host, options.port ?? 4620)));
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

/** A listen failure as a coded error: the port taken or not ours to bind, or a host this machine does not have. */
function listenError(error: NodeJS.ErrnoException, host: string, port: number): DocketError {
  const where = `${host}:${port}`;
  if (error.code === 'EADDRINUSE' || error.code === 'EACCES') {
    return new DocketError('CONNECTION_UNAVAILABLE', `cannot listen on ${where}: ${error.code}`, {
      operation: 'dashboard.serve',
      cause: error,
    });
  }
  return new DocketError('CONFIG_INVALID', `cannot listen on ${where}: ${error.code ?? error.message}`, {
    operation: 'dashboard.serve',
    cause: error,
  });
}
