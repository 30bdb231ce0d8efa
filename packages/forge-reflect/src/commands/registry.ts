/**
 * Every command, in the order --help lists them. Each declares its options, examples and loader
 * beside itself (`<name>.options.ts`); its run (`<name>.ts`) is imported only when it runs.
 */
import { analyzeCommand } from './analyze.options.js';
import { bounceCommand } from './bounce.options.js';
import { corpusCommand } from './corpus.options.js';
import { demoCommand } from './demo.options.js';
import { doctorCommand } from './doctor.options.js';
import { eventsCommand } from './events.options.js';
import { exportCommand } from './export.options.js';
import { ingestCommand } from './ingest.options.js';
import { installCommand } from './install.options.js';
import { learnCommand } from './learn.options.js';
import { metricsCommand } from './metrics.options.js';
import { outcomeCommand } from './outcome.options.js';
import { reportCommand } from './report.options.js';
import { riskCommand } from './risk.options.js';
import { schemaCommand } from './schema.options.js';
import { selfReportCommand } from './self-report.options.js';
import { showCommand } from './show.options.js';
import { uninstallCommand } from './uninstall.options.js';
import { validateCommand } from './validate.options.js';
import type { CommandSpec } from './options.js';

export type { CommandRun, CommandSpec } from './options.js';

export const COMMANDS: readonly CommandSpec[] = [
  schemaCommand,
  validateCommand,
  riskCommand,
  ingestCommand,
  eventsCommand,
  installCommand,
  uninstallCommand,
  selfReportCommand,
  reportCommand,
  showCommand,
  demoCommand,
  doctorCommand,
  bounceCommand,
  outcomeCommand,
  learnCommand,
  metricsCommand,
  analyzeCommand,
  corpusCommand,
  exportCommand,
];
