#!/usr/bin/env node
// The forge-reflect command. Everything lives in dist/ (built by `npm install`).
import { main } from '../dist-bundle/cli.js';

process.exitCode = await main(process.argv.slice(2));
