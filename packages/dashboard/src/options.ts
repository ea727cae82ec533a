import { createQueue, DocketError, type Operator, type Queue, type Store } from '@docket/core';

/** What `createDashboard` takes: the store or queue to show, and how the dashboard is mounted and guarded. */
export interface DashboardOptions<Tx = unknown> {
  /** A store to open a producer-only queue on (closed by `dashboard.close()`). Give this or `queue`. */
  store?: Store<Tx>;
  /** A queue the application already has; the dashboard uses its operator API and never closes it. */
  queue?: Queue<Tx>;
  /** The namespace of the queue opened on `store` (default `default`); not allowed with `queue`. */
  namespace?: string;
  /** The path the dashboard is mounted under, such as `/docket` (default: the root). */
  basePath?: string;
  /** Shows everything and offers no action; every POST is 403. */
  readOnly?: boolean;
  /** When set, every request must carry it: `Authorization: Bearer <token>`, or once `?token=` (sets a cookie). */
  token?: string;
  /**
   * Host names (as in the request's `Host`, without the port) the dashboard answers besides `localhost`, `127.0.0.1`
   * and `[::1]`; `['*']` answers any. Requests for other hosts get 421, so DNS rebinding cannot reach it. Mounted in
   * an application served under a domain, list the domain.
   */
  allowedHosts?: string[];
}

/** The checked options, with the operator API resolved lazily (a queue opened on a store gets ready once). */
export interface DashboardConfig {
  basePath: string;
  readOnly: boolean;
  token: string | null;
  /** `allowedHosts`, lower-cased. */
  allowedHosts: string[];
  operator(): Promise<Operator>;
  close(): Promise<void>;
}

const KEYS = new Set(['store', 'queue', 'namespace', 'basePath', 'readOnly', 'token', 'allowedHosts']);

/** Checks `createDashboard`'s options: unknown keys, exactly one of store and queue, and each value's shape. */
export function resolveOptions(options: unknown): DashboardConfig {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw invalid('the options must be an object');
  }
  const o = options as Record<string, unknown>;
  for (const key of Object.keys(o)) if (!KEYS.has(key)) throw invalid(`unknown option ${JSON.stringify(key)}`);
  if ((o.store === undefined) === (o.queue === undefined)) throw invalid('give exactly one of store and queue');
  if (o.queue !== undefined && o.namespace !== undefined) throw invalid('namespace belongs to the queue given');
  if (o.basePath !== undefined && !isBasePath(o.basePath)) {
    throw invalid('basePath must start with "/", not end with one, and hold only URL path characters');
  }
  if (o.readOnly !== undefined && typeof o.readOnly !== 'boolean') throw invalid('readOnly must be a boolean');
  if (o.token !== undefined && !isToken(o.token)) {
    throw invalid('token must be 16 to 256 printable ASCII characters without spaces');
  }
  const hosts = o.allowedHosts ?? [];
  if (
    !Array.isArray(hosts) ||
    !hosts.every((h) => typeof h === 'string' && /^(\*|\[?[A-Za-z0-9.:_-]{1,253}\]?)$/.test(h))
  ) {
    throw invalid('allowedHosts must be an array of host names (or "*")');
  }
  return {
    basePath: (o.basePath as string | undefined) ?? '',
    readOnly: o.readOnly === true,
    token: (o.token as string | undefined) ?? null,
    allowedHosts: (hosts as string[]).map((h) => h.toLowerCase()),
    ...operatorSource(o),
  };
}

/** The operator API of the given queue, or of a producer queue opened on the given store when first asked. */
function operatorSource(o: Record<string, unknown>): Pick<DashboardConfig, 'operator' | 'close'> {
  if (o.queue !== undefined) {
    const queue = o.queue as Queue<unknown>;
    if (typeof queue !== 'object' || queue === null || typeof queue.operator !== 'object') {
      throw invalid('queue must be a queue made by createQueue');
    }
    return { operator: async () => queue.operator, close: async () => undefined };
  }
  const store = o.store as Store<unknown>;
  if (typeof store !== 'object' || store === null || typeof store.getRun !== 'function') {
    throw invalid('store must be a Docket store');
  }
  const namespace = o.namespace === undefined ? 'default' : o.namespace;
  const queue = createQueue({ store, namespace: namespace as string, runtime: { mode: 'producer' } });
  let ready: Promise<Operator> | null = null;
  return {
    operator: () => {
      ready ??= queue.ready().then(() => queue.operator);
      return ready;
    },
    close: async () => {
      await queue.close();
    },
  };
}

function isBasePath(value: unknown): boolean {
  return typeof value === 'string' && (value === '' || /^(\/[A-Za-z0-9._~-]+)+$/.test(value));
}

function isToken(value: unknown): boolean {
  return typeof value === 'string' && /^[\x21-\x7e]{16,256}$/.test(value);
}

function invalid(message: string): DocketError {
  return new DocketError('CONFIG_INVALID', `createDashboard: ${message}`, { operation: 'createDashboard' });
}
