import { buildApp } from './app.js';
import { type DashboardOptions, resolveOptions } from './options.js';

/** The dashboard: a web-standard request handler, and `close()` for the queue it opened on a store. */
export interface Dashboard {
  (request: Request): Promise<Response>;
  /** Closes the queue the dashboard opened on `store` (a `queue` given is the application's to close). */
  close(): Promise<void>;
}

/**
 * Builds the dashboard as a `(Request) => Promise<Response>` handler that any server can mount: Node's through
 * `@docket/dashboard/node`, Hono, or anything speaking the Fetch API. Bad options throw `CONFIG_INVALID`.
 */
export function createDashboard<Tx>(options: DashboardOptions<Tx>): Dashboard {
  const config = resolveOptions(options);
  const app = buildApp(config);
  const handler = (async (request: Request) => app.fetch(request)) as Dashboard;
  handler.close = () => config.close();
  return handler;
}
