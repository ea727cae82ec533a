import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createQueue } from '@docket/core';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { createDashboard } from '../src/index.js';
import { nodeListener } from '../src/node.js';
import { Client } from './client.js';
import { seedRuns } from './seed.js';
import { STORE_KINDS } from './stores.js';

/**
 * The README's Express recipe, as an application writes it: the dashboard under `/docket` of an Express 5 app through
 * `nodeListener`, served on loopback. The client speaks real HTTP to it.
 */
describe.each(STORE_KINDS)('the dashboard mounted in Express on $name', (kind) => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const fn of cleanups.splice(0).reverse()) await fn();
  });

  async function mounted() {
    const store = await kind.open(cleanups);
    const seeded = await seedRuns(store);
    const dashboard = createDashboard({ store, basePath: '/docket' });
    cleanups.push(() => dashboard.close());
    const app = express();
    app.get('/health', (_req, res) => {
      res.send('app');
    });
    app.all('/docket{/*rest}', nodeListener(dashboard));
    const server: Server = await new Promise((resolve) => {
      const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
    });
    cleanups.push(() => new Promise((done) => server.close(done)));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    // The client's requests go over the socket to Express, answers come back as fetch gives them.
    const overHttp = async (request: Request) =>
      fetch(new URL(new URL(request.url).pathname + new URL(request.url).search, base), {
        method: request.method,
        headers: request.headers,
        ...(request.method === 'POST' ? { body: await request.text() } : {}),
        redirect: 'manual',
      });
    return { store, seeded, base, client: new Client(Object.assign(overHttp, { close: async () => {} })) };
  }

  it('serves its pages under the mount path beside the application’s own routes', async () => {
    const { base, seeded, client } = await mounted();
    expect(await (await fetch(`${base}/health`)).text()).toBe('app');
    const overview = await client.get('/docket/');
    expect(overview.status).toBe(200);
    expect(overview.headers.get('content-security-policy')).toContain("default-src 'none'");
    const runs = await (await client.get('/docket/runs?status=pending')).text();
    for (const runId of seeded.pending) expect(runs).toContain(`href="/docket/runs/${runId}"`);
    expect((await client.get('/docket/assets/style.css')).status).toBe(200);
    expect((await client.get(`/docket/runs/${'0'.repeat(32)}`)).status).toBe(404);
  });

  it('applies a form posted through Express, and refuses one without its CSRF field', async () => {
    const { store, seeded, client } = await mounted();
    const [runId] = seeded.pending as [string];
    const fields = await client.formOf(`/docket/runs/${runId}`, `/docket/runs/${runId}/pause`);
    const refused = await client.post(`/docket/runs/${runId}/pause`, { ...fields, csrf: '', reason: 'no csrf' });
    expect(refused.status).toBe(403);
    const applied = await client.post(`/docket/runs/${runId}/pause`, { ...fields, reason: 'maintenance' });
    expect(applied.status).toBe(303);
    expect(applied.headers.get('location')).toBe(`/docket/runs/${runId}?notice=pause:applied`);
    const queue = createQueue({ store, logger: false, runtime: { mode: 'producer' } });
    cleanups.push(() => queue.close());
    await queue.ready();
    expect((await queue.operator.runs.get(runId))?.status).toBe('paused');
  });
});
