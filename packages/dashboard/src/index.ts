/**
 * `@docket/dashboard`: see and steer a Docket store from a browser. `createDashboard` is a web-standard request
 * handler; `@docket/dashboard/node` serves it on Node's HTTP server.
 */
export { createDashboard, type Dashboard } from './create-dashboard.js';
export type { DashboardOptions } from './options.js';
