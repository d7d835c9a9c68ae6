import { describe, expect, it } from 'vitest';
import { type FlightCall, Flights } from './flight.js';

const callOf = (tenant: string, tool = 'book', fingerprint = 'f'): FlightCall => ({
  policy: { kind: 'EFFECTFUL' },
  ref: { tenant, key: 'k'.repeat(64) },
  call: { tool },
  fingerprint,
});

describe('Flights', () => {
  it('keeps the flights of one key apart by tenant, tool and fingerprint, and lands each', () => {
    const flights = new Flights();
    const a = callOf('a');
    const b = callOf('b');
    const otherTool = callOf('a', 'cancel');
    const otherArguments = callOf('a', 'book', 'g');
    const leadA = flights.lead(a);
    const leadB = flights.lead(b);
    const leadTool = flights.lead(otherTool);
    expect(flights.leaderOf(callOf('a'))).toBe(leadA);
    expect(flights.leaderOf(callOf('b'))).toBe(leadB);
    expect(flights.leaderOf(callOf('a', 'cancel'))).toBe(leadTool);
    expect(flights.leaderOf(otherArguments)).toBeUndefined();
    expect(flights.leaderOf({ ...a, policy: { kind: 'IDEMPOTENT' } })).toBeUndefined();
    leadB.land(); // the middle of the chain
    expect(flights.leaderOf(b)).toBeUndefined();
    expect(flights.leaderOf(a)).toBe(leadA);
    expect(flights.leaderOf(otherTool)).toBe(leadTool);
    leadTool.land(); // the head
    leadTool.land(); // twice (a released flight lands again when its call ends): nothing changes
    expect(flights.leaderOf(otherTool)).toBeUndefined();
    expect(flights.leaderOf(a)).toBe(leadA);
    leadA.release();
    expect(flights.leaderOf(a)).toBeUndefined();
    const again = flights.lead(a);
    expect(flights.leaderOf(a)).toBe(again);
  });
});
