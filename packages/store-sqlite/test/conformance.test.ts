import { runStoreConformance } from '@docket/core/conformance';
import { sqliteHarness } from './helpers.js';

runStoreConformance('sqlite (file)', () => sqliteHarness('file'));
