import { pgConformancePart } from './helpers.js';

pgConformancePart(2);
