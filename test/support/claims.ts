// What store tests claim with: a fresh record reference and a claim's options (override any field).
import { randomBytes, randomUUID } from 'node:crypto';
import type { ClaimOptions, RecordRef } from '@toolfence/core';

export const DAY_MS = 86_400_000;

/** A fresh key under `tenant` (default: a fresh tenant too). */
export function randomRef(tenant = `t-${randomBytes(4).toString('hex')}`): RecordRef {
  return { tenant, key: randomBytes(32).toString('hex') };
}

/** A claim by a fresh owner: at-least-once, a 30 s lease, a day's retention, 3 attempts. */
export function claimOptions(overrides: Partial<ClaimOptions> = {}): ClaimOptions {
  return {
    tool: 'refund',
    fingerprint: 'f'.repeat(64),
    owner: randomUUID(),
    leaseMs: 30_000,
    retentionMs: DAY_MS,
    mode: 'at-least-once',
    maxAttempts: 3,
    checkFingerprint: false,
    ...overrides,
  };
}
