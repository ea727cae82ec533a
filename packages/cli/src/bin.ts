#!/usr/bin/env node
import { main, processIo } from './main.js';

process.exitCode = await main(process.argv.slice(2), processIo());
