import { pino, type Logger } from 'pino';

export type { Logger };

/**
 * Structured JSON logs, one object per line. Authorization headers and anything that looks
 * like a credential are redacted; personal data must never be passed in.
 */
export function createLogger(options: { service: string; level?: string }): Logger {
  return pino({
    name: options.service,
    level: options.level ?? 'info',
    base: { service: options.service },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    redact: {
      paths: ['req.headers.authorization', '*.password', '*.secret', '*.token', '*.accessToken'],
      censor: '[redacted]',
    },
  });
}
