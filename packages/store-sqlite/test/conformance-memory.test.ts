import { runStoreConformance } from '@docket/core/conformance';
import { sqliteHarness } from './helpers.js';

// The in-memory variant in a file of its own, so that the runner overlaps it with the file variant.
runStoreConformance('sqlite (:memory:)', () => sqliteHarness('memory'));
