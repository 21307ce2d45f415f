#!/usr/bin/env node
// Entry point: runs the TypeScript sources through tsx so a checkout works without a build step.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
