export * from './risk-table.js';
export * from './risk-floor.js';
