import { describe, expect, it } from 'vitest';
import { ReplyDeadlines } from './operation-deadline.js';

const timedOut = () => new Error('timed out');

describe('ReplyDeadlines', () => {
  it('passes a reply or an error through and forgets the wait', async () => {
    const deadlines = new ReplyDeadlines(1_000);
    await expect(deadlines.bound(Promise.resolve(7), timedOut)).resolves.toBe(7);
    await expect(deadlines.bound(Promise.reject(new Error('boom')), timedOut)).rejects.toThrow('boom');
    expect(deadlines.size).toBe(0);
  });

  it('fails each unanswered wait at its own deadline, with one timer for all', async () => {
    const deadlines = new ReplyDeadlines(100);
    const started = performance.now();
    const never = new Promise<never>(() => {});
    const first = deadlines.bound(never, timedOut).catch(() => performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const answered = deadlines.bound(
      new Promise((resolve) => setTimeout(() => resolve('late'), 30)),
      timedOut,
    );
    const second = deadlines.bound(never, timedOut).catch(() => performance.now() - started);
    await expect(answered).resolves.toBe('late');
    const [firstMs, secondMs] = await Promise.all([first, second]);
    expect(firstMs).toBeGreaterThanOrEqual(99);
    expect(firstMs).toBeLessThan(140);
    expect(secondMs).toBeGreaterThanOrEqual(149);
    expect(secondMs).toBeLessThan(200);
    expect(deadlines.size).toBe(0);
  });

  it('keeps the queue as long as the waits in flight when replies come in order', async () => {
    const deadlines = new ReplyDeadlines(1_000);
    for (let round = 0; round < 3; round++) {
      await Promise.all(
        Array.from({ length: 2_000 }, (_, index) => deadlines.bound(Promise.resolve(index), timedOut)),
      );
      expect(deadlines.size).toBe(0);
    }
  });
});
