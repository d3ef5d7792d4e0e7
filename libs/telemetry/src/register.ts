// Preload entry: `node --import @herald/telemetry/register ./dist/index.js`.
//
// It must run before the service's first import of http, express, pg, redis or pino.
// CommonJS `require`s are patched by require-in-the-middle once the SDK starts; ES module
// `import`s are only visible to a loader hook, the one @opentelemetry/instrumentation relies on
// (import-in-the-middle). Where Node can, it runs synchronously on the main thread
// (module.registerHooks): the asynchronous loader runs on a thread of its own, which holds
// about 18 MiB of memory for the life of the process.
import { register } from 'node:module';
import { isMainThread } from 'node:worker_threads';
import {
  register as registerSyncHooks,
  supportsSyncHooks,
} from 'import-in-the-middle/register-hooks.mjs';
import { isTelemetryDisabled, startTelemetry } from './index.js';

// Worker threads inherit --import; the main thread's SDK already covers the process's
// exporters, and a second SDK per worker would only duplicate them.
if (isMainThread && !isTelemetryDisabled()) {
  if (supportsSyncHooks()) registerSyncHooks();
  else register('@opentelemetry/instrumentation/hook.mjs', import.meta.url);
  startTelemetry();
}
