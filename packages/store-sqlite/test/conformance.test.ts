import { runStoreConformance } from '@docket/core/testing';
import { sqliteHarness } from './helpers.js';

runStoreConformance('sqlite (file)', () => sqliteHarness('file'));
runStoreConformance('sqlite (:memory:)', () => sqliteHarness('memory'));
