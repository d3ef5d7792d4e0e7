// The events outbox relay, its own process (its own Deployment): started as
// `node --import @herald/telemetry/register dist/relay/main.js`, so telemetry runs before this
// loads.
import { shutdownTelemetry } from '@herald/telemetry';
import { loadRelayConfig } from '../config.js';
import { startRelayProcess } from './relay-process.js';

await startRelayProcess(loadRelayConfig(), {
  handleSignals: true,
  onShutdown: [shutdownTelemetry],
});
