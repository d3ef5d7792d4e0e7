// The variables that name a CA bundle for the TLS connections to PostgreSQL, Redis and Kafka.
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { z } from 'zod';

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g;

/**
 * The PEM text of a CA bundle file: one or more certificates. Throws an error saying why the
 * file cannot serve (unreadable, no certificate, a certificate that does not parse), never
 * quoting its content.
 */
export function readCaFile(file: string): string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    throw new Error(`cannot read ${file}${typeof code === 'string' ? ` (${code})` : ''}`);
  }
  const certificates = text.match(PEM_CERTIFICATE) ?? [];
  if (certificates.length === 0) {
    throw new Error(`${file} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`);
  }
  certificates.forEach((pem, index) => {
    try {
      new X509Certificate(pem);
    } catch {
      throw new Error(`certificate ${index + 1} of ${file} does not parse`);
    }
  });
  return text;
}

/**
 * The path of a CA bundle (PEM) that verifies a server's certificate instead of Node's trusted
 * CAs; optional. Checked when the configuration loads, so a missing or broken file stops the
 * process at start rather than failing every connection later.
 */
export const caFile = () =>
  z
    .string()
    .superRefine((file, ctx) => {
      try {
        readCaFile(file);
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: (err as Error).message });
      }
    })
    .optional();
