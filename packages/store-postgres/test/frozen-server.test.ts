import { createServer, Socket as NetSocket, type Server, type Socket } from 'node:net';
import { createQueue, isDocketError } from '@docket/core';
import { afterEach, describe, expect, it } from 'vitest';
import { postgresStore } from '../src/index.js';
import { DATABASE_URL, freshSchema } from './helpers.js';

/**
 * A TCP proxy on loopback in front of the server that can freeze: while frozen it forwards nothing either way and
 * closes nothing, as a server that stopped answering (a stalled host, a dropped network path) looks to a client.
 */
async function freezableProxy(target: URL): Promise<{ url: string; freeze(on: boolean): void; close(): void }> {
  let frozen = false;
  const pairs: [Socket, Socket][] = [];
  const server: Server = createServer((client) => {
    const upstream = new NetSocket();
    upstream.connect(Number(target.port || 5432), target.hostname);
    pairs.push([client, upstream]);
    const pipe = (from: Socket, to: Socket) =>
      from.on('data', (chunk) => {
        if (!frozen) to.write(chunk);
      });
    pipe(client, upstream);
    pipe(upstream, client);
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const url = new URL(target.href);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  return {
    url: url.href,
    freeze: (on) => {
      frozen = on;
    },
    close: () => {
      for (const [a, b] of pairs) {
        a.destroy();
        b.destroy();
      }
      server.close();
    },
  };
}

// The proxy stands in front of the real server (.ci/run provides it).
describe.runIf(DATABASE_URL)('a server that stops answering', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('fails each call within the statement bound, comes back by itself, and close() returns', async () => {
    const proxy = await freezableProxy(new URL(DATABASE_URL as string));
    cleanups.push(() => proxy.close());
    const queue = createQueue({
      store: postgresStore({
        connectionString: proxy.url,
        schema: freshSchema(),
        poolConfig: { max: 2, query_timeout: 500, connectionTimeoutMillis: 500 },
      }),
      runtime: { mode: 'producer' },
      logger: false,
    });
    const task = queue.define({ name: 'frozen', version: '1' });
    await queue.ready();
    const { runId } = await task.start({ query: {} });

    proxy.freeze(true);
    const started = Date.now();
    const error = await task.get(runId).then(
      () => null,
      (caught: unknown) => caught,
    );
    expect(isDocketError(error) ? error.code : error).toBe('CONNECTION_UNAVAILABLE');
    expect(Date.now() - started).toBeLessThan(5_000);

    proxy.freeze(false);
    expect((await task.get(runId))?.status).toBe('pending');

    proxy.freeze(true);
    const hanging = task.get(runId).catch(() => undefined);
    const closing = Date.now();
    await queue.close();
    expect(Date.now() - closing).toBeLessThan(10_000);
    await hanging;
  }, 30_000);
});
