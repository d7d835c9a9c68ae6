// How often a claim (or, natively, a complete) sweeps its tenant's expiry index, and how far.
/**
 * The expired-entry sweep of a tenant's expiry index runs on a claim drawn at random with
 * probability 1/SWEEP_EVERY and drops up to SWEEP_BUDGET entries, when that claim makes a new
 * record: 4 entries per claim on average, as many as claims create, off the path of the other 15
 * (claim-1.lua). Drawn per claim, not counted: a count picks the claim at one position
 * of every 16, so a workload with a period dividing 16 (16 tenants claimed in turn, or each key
 * claimed twice: new, then a repeat that never sweeps) swept one tenant, or none, and left every
 * other tenant's entries for ever (test/stores/redis-store.test.ts, "16 tenants claimed in turn").
 */
export const SWEEP_EVERY = 16;
export const SWEEP_BUDGET = 64;
