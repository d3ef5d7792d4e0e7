// Preload entry: `node --import @herald/telemetry/register ./dist/index.js`.
//
// It must run before the service's first import of http, express, pg, redis, kafkajs or pino.
// CommonJS `require`s are patched by require-in-the-middle once the SDK starts; ES module
// `import`s are only visible to a loader hook, which is the one @opentelemetry/instrumentation
// ships (its documented ESM hook, registered through module.register instead of the
// --experimental-loader flag).
import { register } from 'node:module';
import { isMainThread } from 'node:worker_threads';
import { isTelemetryDisabled, startTelemetry } from './index.js';

// Worker threads inherit --import; the main thread's SDK already covers the process's
// exporters, and a second SDK per worker would only duplicate them.
if (isMainThread && !isTelemetryDisabled()) {
  register('@opentelemetry/instrumentation/hook.mjs', import.meta.url);
  startTelemetry();
}
