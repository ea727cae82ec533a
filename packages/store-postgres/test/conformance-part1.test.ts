import { pgConformancePart } from './helpers.js';

pgConformancePart(1);
