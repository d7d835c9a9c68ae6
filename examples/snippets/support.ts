// What the docs' snippets take for granted: an app's own clients, tools and models, declared by
// type only. The snippets are compiled (npm run typecheck), never run.
export interface Payments {
  refund(
    request: { orderId: string; amount: number },
    options: { idempotencyKey: string },
  ): Promise<{ refundId: string }>;
}
export declare const payments: Payments;
export declare const redis: import('ioredis').Redis;
export declare const store: import('@toolfence/core').IdempotencyStore;
export declare const guard: import('@toolfence/core').Guard;
