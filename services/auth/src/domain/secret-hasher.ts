import argon2 from 'argon2';

/**
 * OWASP Password Storage Cheat Sheet, argon2id minimum: 19 MiB of memory, 2 iterations,
 * 1 degree of parallelism. The parameters are kept in each hash, so raising them later
 * leaves old hashes verifiable.
 */
export const ARGON2_OPTIONS = {
  type: argon2.argon2id,
  memoryCost: 19_456,
  timeCost: 2,
  parallelism: 1,
} as const;

export interface SecretHasher {
  hash(secret: string): Promise<string>;
  verify(hash: string, secret: string): Promise<boolean>;
}

export const argon2Hasher: SecretHasher = {
  hash: (secret) => argon2.hash(secret, ARGON2_OPTIONS),
  verify: async (hash, secret) => {
    try {
      return await argon2.verify(hash, secret);
    } catch {
      return false;
    }
  },
};
