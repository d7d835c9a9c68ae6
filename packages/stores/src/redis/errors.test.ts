import { StoreConfigurationError, StoreInputError, StoreUnavailableError } from '@toolfence/core/store';
import { describe, expect, it } from 'vitest';
import { describeRedisAddress, toRedisStoreError } from './errors.js';
import { UnexpectedReplyError } from './record-codec.js';

const site = 'RedisStore at 127.0.0.1:6379/0';
const replyError = (message: string) => Object.assign(new Error(message), { name: 'ReplyError' });

describe('Redis error classification', () => {
  it('a script refusing a value is StoreInputError', () => {
    const mapped = toRedisStoreError('claim', replyError('TOOLFENCE_INPUT retentionMs must be ...'), site);
    expect(StoreInputError.isInstance(mapped)).toBe(true);
    expect(mapped.message).toContain(site);
  });

  it('a script error, WRONGTYPE, NOPERM, READONLY, an unknown command or an unreadable reply is StoreConfigurationError', () => {
    for (const message of [
      'ERR user_script:12: attempt to compare nil with number',
      'WRONGTYPE Operation against a key holding the wrong kind of value',
      'NOPERM this user has no permissions to run the evalsha command',
      "READONLY You can't write against a read only replica.",
      'NOAUTH Authentication required.',
    ]) {
      const mapped = toRedisStoreError('claim', replyError(message), site);
      expect(StoreConfigurationError.isInstance(mapped), message).toBe(true);
      expect(mapped.message).toContain(site);
    }
    const unreadable = toRedisStoreError('claim', new UnexpectedReplyError('claim', [99]), site);
    expect(StoreConfigurationError.isInstance(unreadable)).toBe(true);
  });

  it('connection errors and "not now" replies are StoreUnavailableError naming the address', () => {
    for (const error of [
      new Error('Connection is closed.'),
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }),
      replyError('LOADING Redis is loading the dataset in memory'),
      replyError('BUSY Redis is busy running a script.'),
      replyError('CLUSTERDOWN The cluster is down'),
      replyError('OOM command not allowed when used memory > maxmemory.'),
    ]) {
      const mapped = toRedisStoreError('renew', error, site);
      expect(StoreUnavailableError.isInstance(mapped), error.message).toBe(true);
      expect(mapped.message).toContain(site);
      expect(mapped.cause).toBe(error);
    }
  });

  // Issue 27, item 6: a "not now" reply or a connection never made changed nothing; a
  // connection that closed with the command in flight may have run it.
  it('says whether a failed exchange may have been applied', () => {
    const outcome = (error: Error) =>
      (toRedisStoreError('resolve', error, site) as StoreUnavailableError).outcome;
    expect(outcome(replyError('BUSY Redis is busy running a script.'))).toBe('not-applied');
    expect(outcome(replyError('OOM command not allowed when used memory > maxmemory.'))).toBe('not-applied');
    expect(
      outcome(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' })),
    ).toBe('not-applied');
    expect(outcome(new Error("Stream isn't writeable and enableOfflineQueue options is false"))).toBe(
      'not-applied',
    );
    expect(outcome(new Error('Connection is closed.'))).toBe('unknown');
    expect(outcome(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }))).toBe('unknown');
  });

  it('describes addresses without credentials', () => {
    expect(describeRedisAddress({ options: { host: '10.0.0.5', port: 6380, db: 2, password: 'pw' } })).toBe(
      '10.0.0.5:6380/2',
    );
    expect(
      describeRedisAddress({
        isCluster: true,
        startupNodes: ['redis://user:pw@10.0.0.1:7000', { host: '10.0.0.2', port: 7001 }],
      }),
    ).toBe('cluster 10.0.0.1:7000,10.0.0.2:7001');
    expect(
      describeRedisAddress({
        options: { sentinels: [{ host: 's1', port: 26379 }], name: 'mymaster', db: 0 },
      }),
    ).toBe('sentinel master mymaster via s1:26379/0');
  });
});
