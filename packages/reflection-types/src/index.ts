export * from './reflection.js';
export type * from './reflection.dto.js';
export * from './feedback.js';
