import { describe, expect, it } from '@jest/globals';
import { heraldInstrumentations } from '../../src/instrumentations.js';

const names = (options: Parameters<typeof heraldInstrumentations>[0]) => {
  const list = heraldInstrumentations(options);
  // Constructing enables them (patching hooks); tests leave nothing patched behind.
  for (const instrumentation of list) instrumentation.disable();
  return list.map((i) => i.instrumentationName);
};

describe('heraldInstrumentations', () => {
  it('when no client spans are asked for, then pg and redis are not instrumented', () => {
    const loaded = names({ sendLogs: false });
    expect(loaded).toEqual(
      expect.arrayContaining([
        '@opentelemetry/instrumentation-http',
        '@opentelemetry/instrumentation-undici',
        '@opentelemetry/instrumentation-pino',
      ]),
    );
    expect(loaded).not.toContain('@opentelemetry/instrumentation-pg');
    expect(loaded).not.toContain('@opentelemetry/instrumentation-redis');
    // Routes are named by Herald's router (setHttpRoute), not by wrapping every middleware.
    expect(loaded).not.toContain('@opentelemetry/instrumentation-express');
  });

  it('when pg and redis spans are asked for, then both are instrumented', () => {
    const loaded = names({ sendLogs: false, clientSpans: ['pg', 'redis'] });
    expect(loaded).toContain('@opentelemetry/instrumentation-pg');
    expect(loaded).toContain('@opentelemetry/instrumentation-redis');
  });
});
