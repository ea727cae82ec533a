// `@docket/core/testing`: what an application's own tests use, with no test runner needed: the in-memory store, a clock
// moved by hand, and waits on a condition or a run's status. The store conformance suite is `@docket/core/conformance`.
export { memoryStore } from '../store/memory-store.js';
export { type ManualClock, manualClock, sleep, waitFor, waitForStatus } from './helpers.js';
