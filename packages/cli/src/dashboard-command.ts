import { once } from 'node:events';
import type { Queue } from '@docket/core';
import { createDashboard } from '@docket/dashboard';
import { serveDashboard } from '@docket/dashboard/node';

/** What `docket dashboard` was given, checked: port, host, read-only, token. */
export interface DashboardFlags {
  port: number;
  host: string;
  readOnly: boolean;
  token: string | undefined;
  /** Host names to answer besides loopback and `host` (`--allow-host`, comma-separated). */
  allowHosts: string[];
}

/** Addresses that bind every interface: no one host name to answer to. */
const ANY_INTERFACE = new Set(['0.0.0.0', '::', '[::]']);

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

/**
 * `docket dashboard`: serves the dashboard on the queue's store until `stopped` resolves (SIGINT or SIGTERM in the
 * command), then stops serving. Warns when it listens beyond loopback without a token. Exit 0.
 */
export async function dashboardCommand(
  queue: Queue,
  flags: DashboardFlags,
  io: { out: (text: string) => void; err: (text: string) => void },
  stopped: Promise<unknown> = Promise.race([once(process, 'SIGINT'), once(process, 'SIGTERM')]),
): Promise<number> {
  const allowedHosts = [...flags.allowHosts, ...(ANY_INTERFACE.has(flags.host) ? [] : [flags.host])];
  const dashboard = createDashboard({
    queue,
    allowedHosts,
    readOnly: flags.readOnly,
    ...(flags.token === undefined ? {} : { token: flags.token }),
  });
  const served = await serveDashboard(dashboard, { port: flags.port, host: flags.host }).catch(async (error) => {
    await dashboard.close();
    throw error;
  });
  if (!LOOPBACK.has(flags.host) && flags.token === undefined) {
    io.err(`warning: listening on ${flags.host} without --token: anyone who reaches it can steer runs`);
  }
  const how = [flags.readOnly ? 'read-only' : null, flags.token ? 'open it once with ?token=<token>' : null]
    .filter((part) => part !== null)
    .join(', ');
  io.out(`Docket dashboard on ${served.url}${how ? ` (${how})` : ''}; Ctrl-C stops it`);
  await stopped;
  await served.close();
  await dashboard.close();
  return 0;
}
