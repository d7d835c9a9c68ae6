// A fake payments provider for the reconcile tests: it charges by idempotency key (a repeat with
// the same key returns the first charge, as Stripe's Idempotency-Key does), can lose the reply
// after charging, and answers "is there a charge for this key?". `charges` counts the effects
// that happened; a provider asked to charge `withoutDedupe` counts every charge, so a second
// execution shows.

export interface Charge {
  readonly chargeId: string;
  readonly amountCents: number;
}

export class Payments {
  /** Effects that happened (every charge that reached the provider and was not deduped). */
  charges = 0;
  private readonly byKey = new Map<string, Charge>();
  /** Lose the reply of the next this-many charges after applying them. */
  lostReplies = 0;
  /** Refuse the next this-many charges before applying them (with an error that is no "no effect" proof). */
  refusedBeforeApplying = 0;

  constructor(private readonly options: { readonly dedupe: boolean } = { dedupe: true }) {}

  async charge(idempotencyKey: string, amountCents: number): Promise<Charge> {
    await sleep(2);
    if (this.refusedBeforeApplying > 0) {
      this.refusedBeforeApplying--;
      throw Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
    }
    const known = this.options.dedupe ? this.byKey.get(idempotencyKey) : undefined;
    const charge = known ?? { chargeId: `ch_${++this.charges}`, amountCents };
    if (known === undefined) this.byKey.set(idempotencyKey, charge);
    if (this.lostReplies > 0) {
      this.lostReplies--;
      throw Object.assign(new Error('connect ETIMEDOUT 10.0.0.7:443'), { code: 'ETIMEDOUT' });
    }
    return charge;
  }

  /** The provider's own lookup by idempotency key. */
  async find(idempotencyKey: string): Promise<Charge | undefined> {
    await sleep(1);
    return this.byKey.get(idempotencyKey);
  }
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A gate a probe or a body waits on until the test opens it. */
export function gate(): { readonly wait: Promise<void>; open(): void } {
  let open!: () => void;
  const wait = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { wait, open };
}
