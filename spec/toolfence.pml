/*
 * toolfence.pml -- a Promela model of the claim / lease / fence protocol of toolfence.
 *
 * One idempotency key, N workers calling it, a store whose operations are single atomic steps
 * exactly as MemoryStore implements them (packages/core/src/store/memory-store.ts), and workers
 * that follow Guard.run / Guard.execute / Guard.record (packages/core/src/guard/guard.ts) with a
 * LeaseKeeper (lease-keeper.ts). spec/README.md maps every step to the code line (the model
 * names functions, not line numbers, so that it does not go stale when lines move).
 *
 * The environment (proctype env) may at any time: let the current lease run out, expire a record
 * past its retention (a settled one, or an in-progress one whose lease ran out: lease+retention),
 * let an operator resolve an indeterminate/abandoned record, crash a worker, or let the body of
 * a superseded attempt return late (recordLate).
 * A stall is a worker that is not scheduled while the environment acts (leases may run out).
 *
 * Compile-time switches (spin -a -DNAME ...):
 *   MODE=1           at-most-once (EFFECTFUL)      MODE=0  at-least-once (IDEMPOTENT)
 *   LIVENESS         add the LTL property `settles` (run pan with -a -f)
 *   TOLD_PER_LIFE    stricter "what callers are told" check (see README)
 *   LASTCLAIMS, MAXCRASH, MAXLOST, MAXRESOLVE, NO_RESOLVE   bounds (see README)
 *   Rules the model found wrong, kept so that the check bites if they come back (README):
 *   GUARD_NOTFOUND_ANY_KIND    Guard.record answers not_found with its own value for IDEMPOTENT too
 *   MEMSTORE_RENEW             MemoryStore.renew: expiresAtMs = max(expiresAtMs, lease), no retention
 *   GUARD_OWN_COMPLETION       isOwnCompletion on fence and owner only (OPEN: still the code's rule;
 *                              the model's default is the proposed fix)
 *   Known-bad rules, each must produce a counterexample:
 *   BAD_COMPLETE_UNFENCED      complete without the fence/owner condition
 *   BAD_CLAIM_READ_THEN_WRITE  claim as two atomic steps: read, then write
 *   BAD_FENCE_ONLY             holder check on the fence alone (no owner)
 *   BAD_EFFECTFUL_TAKEOVER     at-most-once takes over an expired lease like at-least-once
 *   BAD_LEASE_NEVER_EXPIRES    leases never run out (liveness must fail)
 */

#ifndef N
#define N 3
#endif
#if N < 1 || N > 4
#error "N must be 1..4 (the environment's per-worker options are unrolled for 4)"
#endif
#ifndef MODE
#define MODE 1
#endif
#ifndef MAXATT
#define MAXATT 2          /* ClaimOptions.maxAttempts */
#endif
#ifndef MAXCLAIMS
#define MAXCLAIMS 3       /* claims one worker may send (bounds the owner ids it uses) */
#endif
#ifndef LASTCLAIMS
#define LASTCLAIMS MAXCLAIMS   /* claims the last worker may send (a single-shot caller when 1) */
#endif
#define CLAIMS_OF(w) ((w) == N - 1 -> LASTCLAIMS : MAXCLAIMS)
#ifndef MAXCRASH
#define MAXCRASH 1        /* workers the environment may crash */
#endif
#ifndef MAXLOST
#define MAXLOST 1         /* replies of applied store operations that are lost */
#endif
#ifndef MAXRESOLVE
#define MAXRESOLVE 1      /* operator resolutions */
#endif

#define AT_LEAST_ONCE 0
#define AT_MOST_ONCE 1

/* RecordState; NONE = no live record (never created, released, or past retention) */
#define NONE       0
#define INPROG     1
#define COMPLETED  2
#define INDET      3
#define ABANDONED  4

/* answers of the store */
mtype = { R_ACQUIRED, R_BUSY, R_COMPLETED, R_INDET, R_ABANDONED,   /* claim */
          X_OK,          /* renewed / completed / released / marked */
          X_STALE,       /* stale (complete, release, mark) or lost: stale|settled (renew) */
          X_NOTFOUND }

/* owner ids are unique per claim: worker w's k-th claim (k = 1..MAXCLAIMS) is w*MAXCLAIMS + k */
#define NOWNERS   (N * MAXCLAIMS)
#define WORKER(o) (((o) - 1) / MAXCLAIMS)
/* an outcome is the owner id of the attempt that produced it; the operator's is OPERATOR */
#define OPERATOR  (NOWNERS + 1)

/* ---- the store: one record, for one (tenant, key) ---- */
byte rstate;       /* record.state */
byte rfence;       /* record.fence */
byte rattempt;     /* record.attempt */
byte rowner;       /* record.owner */
byte routcome;     /* record.outcome */
bool lease_live;   /* record.leaseExpiresAtMs > store clock */
bool gap;          /* in progress: record.expiresAtMs >= record.leaseExpiresAtMs + retention
                      (the record outlives its lease by a full retention window) */

/* ---- environment bookkeeping ---- */
bool crashed[N];
bool done[N];
#ifdef LIVENESS
byte hold[N];      /* owner id a worker currently acts as the holder of (0: none) */
#endif
byte late_o[N];    /* a superseded/timed-out body still running, that may return late */
byte late_f[N];
byte late_k[N];    /* LATE_RECORD: recordLate; LATE_KEEP: settleAfterTimeout */
#define LATE_RECORD 1
#define LATE_KEEP   2
byte crashes;
byte resolves;
byte lost_replies;

/* ---- ghost state: what happened in the current life of the key ----
 * A life of the key ends when its record is deleted (released, resolved as released, or past
 * retention); the next claim starts a new life at fence 1. */
byte g_owner;      /* owner of the latest acquisition in the current life (0: none) */
byte g_fence;      /* highest fence acquired in the current life */
byte execs;        /* body executions of attempts acquired in the current life */
byte recorded;     /* outcome recorded in the current life (0: none) */
byte wexecs;       /* body executions within the current retention window of the key: ends
                      with a release, an operator's release, or a full retention window passing
                      after the record settled or its lease ran out (DESIGN.md, "Guarantee") */
#ifdef TOLD_PER_LIFE
bool w_cur[N];     /* worker w's current attempt belongs to the current life */
byte w_rec[N];     /* outcome recorded in the life of worker w's current attempt (0: none) */
#endif

#ifdef BAD_FENCE_ONLY
#define IS_HOLDER(o, f) (rfence == (f))
#else
#define IS_HOLDER(o, f) (rfence == (f) && rowner == (o))   /* isHolder in memory-store.ts */
#endif

/* per-worker ghost of TOLD_PER_LIFE, unrolled for up to 4 workers */
#ifdef TOLD_PER_LIFE
#if N == 1
#define FOR_WORKERS(M) M(0)
#elif N == 2
#define FOR_WORKERS(M) M(0) M(1)
#elif N == 3
#define FOR_WORKERS(M) M(0) M(1) M(2)
#else
#define FOR_WORKERS(M) M(0) M(1) M(2) M(3)
#endif
#define REC_IN_LIFE(W) if :: w_cur[W] -> w_rec[W] = v :: else -> skip fi;
#define END_LIFE(W) w_cur[W] = false;
#define TOLD_ENTER(w) w_cur[w] = true; w_rec[w] = 0
#define TOLD_LEAVE(w) w_cur[w] = false; w_rec[w] = 0
#else
#define TOLD_ENTER(w) skip
#define TOLD_LEAVE(w) skip
#endif
/* hold[] exists for the liveness property only. */
#ifdef LIVENESS
#define SET_HOLD(w, v) hold[w] = v
#else
#define SET_HOLD(w, v) skip
#endif

/* ---- ghost checks ---- */

/* A claim acquired the key as (o, f) and the guard enters the body (Guard.claimLoop ->
 * Guard.execute: the body starts right after the claim's answer). The execution is counted
 * here, in the life the attempt belongs to; when inside the body the effect happens does not
 * change the count. Fences strictly increase within a life; executions per life are bounded. */
inline acquired(o, f) {
  printf("MSC: owner %d acquires fence %d (highest fence so far in this life: %d) and runs the body\n", o, f, g_fence);
  assert(f > g_fence);
  g_fence = f;
  g_owner = o;
  execs++;
  wexecs++;
  printf("MSC: (execution %d of this life, %d of this retention window)\n", execs, wexecs);
#if MODE == AT_MOST_ONCE
  assert(execs <= 1);
  assert(wexecs <= 1);
#else
  assert(execs <= MAXATT);
  assert(wexecs <= MAXATT);
#endif
}

/* A holder-conditioned write is applied only for the latest holder of the current life:
 * never for a lower fence, never for a holder of an earlier life of the key (owners are unique
 * per claim and g_owner is reset when a life ends, so this one comparison says both). */
inline holder_write(o) {
  printf("MSC: the store writes for owner %d (latest holder of this life: %d)\n", o, g_owner);
  assert(o == g_owner)
}

/* An outcome is recorded in the current life: at most one per life. */
inline record_outcome(v) {
  printf("MSC: outcome %d is recorded (already recorded in this life: %d)\n", v, recorded);
  assert(recorded == 0);
  recorded = v;
  routcome = v;
#ifdef TOLD_PER_LIFE
  FOR_WORKERS(REC_IN_LIFE)
#endif
  skip
}

/* A caller is answered with value v as the completed result of the call. */
inline tell(v) {
  printf("MSC: a caller is told value %d (store: state %d outcome %d)\n", v, rstate, routcome);
  /* never while the store holds another outcome */
  assert(rstate == NONE || (rstate == COMPLETED && routcome == v))
}

/* A caller is answered with the value of its own attempt, v, by worker w. */
inline tell_own(v, w) {
  tell(v);
#ifdef TOLD_PER_LIFE
  /* ... and that value is not contradicted by an outcome recorded in the same life */
  assert(w_rec[w] == 0 || w_rec[w] == v);
#endif
  skip
}

/* The record is deleted; a new life of the key begins at the next claim. */
inline delete_record() {
  rstate = NONE; rfence = 0; rattempt = 0; rowner = 0; routcome = 0; lease_live = false; gap = false;
  g_owner = 0; g_fence = 0; execs = 0; recorded = 0;
#ifdef TOLD_PER_LIFE
  FOR_WORKERS(END_LIFE)
#endif
  printf("MSC: record deleted: a new life of the key begins\n")
}

/* ... and the key was legitimately freed: a new retention window begins. */
inline end_window() {
  wexecs = 0;
  printf("MSC: (the key was freed: a new retention window begins)\n")
}

/* ---- store operations: each is one atomic step, as MemoryStore ---- */

/* MemoryStore.claim, deciding on a snapshot (s_*) of the record. The good model takes the
 * snapshot in the same atomic step; BAD_CLAIM_READ_THEN_WRITE does not. */
inline claim_decide(o, f, res, s_state, s_fence, s_att, s_live, s_owner) {
  if
  :: s_state == NONE ->                                   /* no live record: create, fence 1 */
       rstate = INPROG; rfence = 1; rattempt = 1; rowner = o; routcome = 0; lease_live = true; gap = true;
       f = 1; res = R_ACQUIRED;
       acquired(o, 1)
  :: s_state == INPROG && s_owner == o ->                 /* the same claim resent: acquired again, */
       lease_live = true; gap = true;                     /* same fence, lease restarted */
       f = s_fence; res = R_ACQUIRED
  :: s_state == COMPLETED -> res = R_COMPLETED
  :: s_state == INDET -> res = R_INDET
  :: s_state == ABANDONED -> res = R_ABANDONED
  :: s_state == INPROG && s_owner != o && s_live -> res = R_BUSY
#if MODE == AT_MOST_ONCE && !defined(BAD_EFFECTFUL_TAKEOVER)
  :: s_state == INPROG && s_owner != o && !s_live ->      /* at-most-once: indeterminate */
       rstate = INDET; gap = false; res = R_INDET
#else
  :: s_state == INPROG && s_owner != o && !s_live && s_att >= MAXATT ->   /* abandoned */
       rstate = ABANDONED; gap = false; res = R_ABANDONED
  :: s_state == INPROG && s_owner != o && !s_live && s_att < MAXATT ->    /* takeover */
       rfence = s_fence + 1; rattempt = s_att + 1; rowner = o; lease_live = true; gap = true;
       f = rfence; res = R_ACQUIRED;
       acquired(o, f)
#endif
  fi;
  printf("MSC: owner %d claim -> %e\n", o, res)
}

/* MemoryStore.renew */
inline st_renew(o, f, res) {
  if
  :: rstate == NONE -> res = X_NOTFOUND                              /* :144 */
  :: rstate != NONE && !IS_HOLDER(o, f) -> res = X_STALE             /* :145 */
  :: rstate != NONE && IS_HOLDER(o, f) && rstate != INPROG -> res = X_STALE   /* :146 */
  :: rstate == INPROG && IS_HOLDER(o, f) ->                          /* :147-149 */
       holder_write(o);
       lease_live = true; res = X_OK;
#ifdef MEMSTORE_RENEW
       /* the old MemoryStore.renew: expiresAtMs = max(expiresAtMs, leaseExpiresAtMs): once the
        * attempt has run longer than (retention - lease), the record expires WITH its lease */
       if
       :: skip
       :: gap = false
       fi
#else
       /* MemoryStore.renew (as Redis, Postgres): expiresAtMs = max(expiresAtMs, lease + retention) */
       skip
#endif
  fi;
  printf("MSC: owner %d (fence %d) renew -> %e\n", o, f, res)
}

/* MemoryStore.complete */
#ifdef BAD_COMPLETE_UNFENCED
#define COMPLETE_ALLOWED(o, f) (rstate != COMPLETED)
#else
#define COMPLETE_ALLOWED(o, f) (IS_HOLDER(o, f) && rstate != COMPLETED)
#endif
inline st_complete(o, f, res) {
  if
  :: rstate == NONE -> res = X_NOTFOUND                              /* :163 */
  :: rstate != NONE && !COMPLETE_ALLOWED(o, f) -> res = X_STALE      /* :164-166 */
  :: rstate != NONE && COMPLETE_ALLOWED(o, f) ->                     /* :167-172 */
       holder_write(o);
       rstate = COMPLETED; gap = false; record_outcome(o); res = X_OK
  fi;
  printf("MSC: owner %d (fence %d) complete -> %e\n", o, f, res)
}

/* MemoryStore.release */
inline st_release(o, f, res) {
  if
  :: rstate == NONE -> res = X_NOTFOUND                                          /* :180 */
  :: rstate != NONE && !(IS_HOLDER(o, f) && rstate == INPROG) -> res = X_STALE   /* :181-183 */
  :: rstate == INPROG && IS_HOLDER(o, f) ->                                      /* :184-186 */
       holder_write(o);
       delete_record(); end_window(); res = X_OK
  fi;
  printf("MSC: owner %d (fence %d) release -> %e\n", o, f, res)
}

/* MemoryStore.markIndeterminate */
inline st_mark(o, f, res) {
  if
  :: rstate == NONE -> res = X_NOTFOUND                                          /* :199 */
  :: rstate != NONE && !(IS_HOLDER(o, f) && rstate == INPROG) -> res = X_STALE   /* :200-202 */
  :: rstate == INPROG && IS_HOLDER(o, f) ->                                      /* :203-207 */
       holder_write(o);
       rstate = INDET; gap = false; res = X_OK
  fi;
  printf("MSC: owner %d (fence %d) mark -> %e\n", o, f, res)
}

/* ---- a worker: a caller of the guarded tool, Guard.run / Guard.claimLoop ----
 * Steps that only change a worker's own variables are folded into the atomic step of the store
 * operation that follows them (nobody else can observe them in between), so each atomic block
 * below is: local decisions + ONE store operation + what the worker does with its answer. */

/* after an error reached the caller (or a wait gave up): the caller calls again, or stops */
#define CALL_AGAIN_OR_STOP \
    TOLD_LEAVE(me); o = 0; f = 0; res = 0; lost = false; \
    if \
    :: goto at_claim \
    :: done[me] = true; goto finished \
    fi

/* SUPERSEDED: claim again (Guard.claimLoop) */
#define CLAIM_AGAIN \
    TOLD_LEAVE(me); o = 0; f = 0; res = 0; lost = false; \
    goto at_claim

/* the call returned a value */
#define RETURN_VALUE \
    TOLD_LEAVE(me); o = 0; f = 0; res = 0; lost = false; done[me] = true; \
    goto finished

/* recordLate: the body may still return later, and its value be offered to complete */
#define MAY_RETURN_LATE \
    if \
    :: late_o[me] == 0 -> late_o[me] = o; late_f[me] = f; late_k[me] = LATE_RECORD \
    :: true -> skip \
    fi

/* isOwnCompletion: a stale answer whose record is this holder's own completion (a retried
 * complete whose first try was applied). As the guard has it (GUARD_OWN_COMPLETION), fence and
 * owner only, which an operator's resolution of the holder's record also matches; the model's
 * default is the proposed fix: the recorded outcome must be the one this holder sent. */
#ifdef GUARD_OWN_COMPLETION
#define OWN_COMPLETION (rstate == COMPLETED && rfence == f && rowner == o)
#else
#define OWN_COMPLETION (rstate == COMPLETED && rfence == f && rowner == o && routcome == o)
#endif
/* Guard.record on not_found: an EFFECTFUL attempt that did not lose its lease answers with its
 * own value; an IDEMPOTENT one asks the store again. GUARD_NOTFOUND_ANY_KIND is the rule before
 * the model found TOLD_PER_LIFE broken by it (any kind answered with its own value). */
#ifdef GUARD_NOTFOUND_ANY_KIND
#define NOTFOUND_ANSWERS (!lost)
#else
#define NOTFOUND_ANSWERS (!lost && MODE == AT_MOST_ONCE)
#endif
/* The answer of complete (Guard.record) */
#define COMPLETE_ANSWER \
      if \
      :: res == X_OK || (res == X_STALE && OWN_COMPLETION) ->   /* recorded */ \
           tell_own(o, me); RETURN_VALUE \
      :: res == X_NOTFOUND && NOTFOUND_ANSWERS ->   /* the record vanished: own value */ \
           tell_own(o, me); RETURN_VALUE \
      :: else -> CLAIM_AGAIN                        /* SUPERSEDED */ \
      fi

/* The answer of a claim (Guard.claimLoop). */
#define CLAIM_ANSWER \
      if \
      :: res == R_ACQUIRED ->              /* run the body (Guard.execute) */ \
           res = 0; lost = false; SET_HOLD(me, o); TOLD_ENTER(me); \
           goto holding \
      :: res == R_BUSY ->                  /* waitForSettle, then claim again, */ \
           CALL_AGAIN_OR_STOP              /* or OutcomePendingError past waitTimeoutMs */ \
      :: res == R_COMPLETED ->             /* deduplicated (Guard.settled) */ \
           tell(routcome); \
           RETURN_VALUE \
      :: res == R_INDET || res == R_ABANDONED ->   /* the caller gets an error (Guard.settled) */ \
           CALL_AGAIN_OR_STOP \
      fi

/* The reply of a store operation that took effect is lost (at most MAXLOST times in a run). */
#define REPLY_LOST (lost_replies < MAXLOST)
#define LOSE_REPLY lost_replies++; printf("MSC: the reply to owner %d is lost\n", o)

proctype worker(byte me) {
  byte seq;        /* claims sent so far */
  byte o;          /* owner id of the current claim (unique per claim, as in Guard.claimLoop) */
  byte f;          /* fence acquired */
  mtype res;
  bool lost;       /* leaseLost !== undefined (Guard.execute) */
#ifdef BAD_CLAIM_READ_THEN_WRITE
  byte s_state, s_fence, s_att, s_owner;
  bool s_live;
#endif

  {
    skip;
at_claim:
#ifdef BAD_CLAIM_READ_THEN_WRITE
    atomic {
      if
      :: seq >= CLAIMS_OF(me) -> done[me] = true; goto finished
      :: else -> skip
      fi;
      s_state = rstate; s_fence = rfence; s_att = rattempt; s_live = lease_live; s_owner = rowner;
      printf("MSC: worker %d reads the record: state %d fence %d lease live %d\n", me, s_state, s_fence, s_live)
    }
    atomic {
      seq++; o = me * MAXCLAIMS + seq;
      claim_decide(o, f, res, s_state, s_fence, s_att, s_live, s_owner);
      s_state = 0; s_fence = 0; s_att = 0; s_live = false; s_owner = 0;
#else
    atomic {
      if                                   /* bound of the model: a worker sends MAXCLAIMS claims */
      :: seq >= CLAIMS_OF(me) -> done[me] = true; goto finished
      :: else -> skip
      fi;
      seq++; o = me * MAXCLAIMS + seq;     /* a fresh owner id per claim */
      claim_decide(o, f, res, rstate, rfence, rattempt, lease_live, rowner);
#endif
      if
      :: REPLY_LOST -> LOSE_REPLY; res = 0; f = 0; goto resend_claim
      :: true -> skip
      fi;
      CLAIM_ANSWER
    }

resend_claim:                              /* Guard.claimOnce: the same claim, once more */
    atomic {
      claim_decide(o, f, res, rstate, rfence, rattempt, lease_live, rowner);
      CLAIM_ANSWER
    }
    /* (a second failure is StoreUnavailableError: not modelled, see README) */

holding:                                   /* Guard.execute */
    do
    :: atomic {                            /* LeaseKeeper.beat */
         !lost ->
         st_renew(o, f, res);
         if
         :: res != X_OK -> lost = true     /* onLost: leaseLost is set, the body's signal aborted */
         :: else -> skip
         fi;
         res = 0
       }
    :: atomic {                            /* the body settles, or the call is interrupted */
         if
         :: skip
         :: lost = true                    /* the watchdog fired (renewals failing, lease estimate past) */
         fi;
         if
         :: true ->                        /* the body returned: Guard.record */
              st_complete(o, f, res);
              SET_HOLD(me, 0);
              if
              :: REPLY_LOST -> LOSE_REPLY; res = 0; goto complete_retry
              :: true -> skip
              fi;
              COMPLETE_ANSWER
         :: lost ->                        /* the body threw the LeaseLostError: SUPERSEDED */
              SET_HOLD(me, 0);
              CLAIM_AGAIN
         :: lost ->                        /* grace over, body still running: recordLate, SUPERSEDED */
              SET_HOLD(me, 0);
              MAY_RETURN_LATE;
              CLAIM_AGAIN
#if MODE == AT_MOST_ONCE
         :: true ->                        /* the body threw, or timed out: markIndeterminate (+ recordLate) */
              st_mark(o, f, res);
              SET_HOLD(me, 0);
              MAY_RETURN_LATE;
              CALL_AGAIN_OR_STOP
         :: true ->                        /* the body threw a no-effect error: release */
              st_release(o, f, res);
              SET_HOLD(me, 0);
              if
              :: res != X_OK && lost -> CLAIM_AGAIN        /* not released, lease lost: SUPERSEDED */
              :: else -> CALL_AGAIN_OR_STOP                /* the error reaches the caller */
              fi
#else
         :: true ->                        /* the body threw: release */
              st_release(o, f, res);
              SET_HOLD(me, 0);
              if
              :: res != X_OK && lost -> CLAIM_AGAIN        /* not released, lease lost: SUPERSEDED */
              :: else -> CALL_AGAIN_OR_STOP                /* the error reaches the caller */
              fi
         :: late_o[me] == 0 ->             /* timed out: ToolTimeoutError to the caller; the claim */
              SET_HOLD(me, 0);             /* is kept and renewed until the body settles */
              late_o[me] = o; late_f[me] = f; late_k[me] = LATE_KEEP;   /* (settleAfterTimeout) */
              CALL_AGAIN_OR_STOP
#endif
         fi
       }
    od;

complete_retry:                            /* Guard.completeWithRetry: the same complete again */
    atomic {
      st_complete(o, f, res);
      COMPLETE_ANSWER
    }

finished:
    skip
  } unless { crashed[me] }
}

/* ---- the environment ---- */

/* crash worker W (it stops forever: the escape `unless { crashed[me] }` fires at its next step) */
#define CRASH(W) \
  :: atomic { crashes < MAXCRASH && !crashed[W] && !done[W] -> crashed[W] = true; crashes++; \
       printf("MSC: worker %d crashes\n", W) }

/* the body of a superseded or timed-out attempt of worker W returns (recordLate,
 * settleAfterTimeout), or fails (settleAfterTimeout releases); a crashed worker's background
 * body is gone with it. The renewals settleAfterTimeout keeps up are not steps of their own: a
 * renewal only keeps the lease live, which is the same as the environment not letting it run out
 * (a renewal after the lease ran out and before anyone acted on it changes nothing observable). */
#define LATE(W) \
  :: atomic { late_o[W] != 0 && !crashed[W] -> \
       printf("MSC: the late body of owner %d returns\n", late_o[W]); \
       st_complete(late_o[W], late_f[W], eres); \
       late_o[W] = 0; late_f[W] = 0; late_k[W] = 0; eres = 0 } \
  :: atomic { late_k[W] == LATE_KEEP && !crashed[W] -> \
       printf("MSC: the late body of owner %d fails\n", late_o[W]); \
       st_release(late_o[W], late_f[W], eres); \
       late_o[W] = 0; late_f[W] = 0; late_k[W] = 0; eres = 0 }

active proctype env() {
  mtype eres;
end_env:
  do
#ifndef BAD_LEASE_NEVER_EXPIRES
  :: atomic { rstate == INPROG && lease_live -> lease_live = false;
              printf("MSC: the lease of owner %d runs out\n", rowner) }   /* the lease deadline passes */
#endif
  :: atomic { rstate == INPROG && !lease_live ->                      /* past retention (MemoryStore.live) */
       if
       :: gap -> delete_record(); end_window()    /* a full retention window after the lease ran out */
       :: !gap ->                                 /* sooner: the window was cut short */
            printf("MSC: the record expires less than a retention window after its lease\n");
            delete_record()
       fi }
  :: atomic { rstate == INPROG && lease_live && !gap ->                 /* lease and retention deadlines coincide */
       printf("MSC: the lease of owner %d runs out and the record expires with it\n", rowner);
       delete_record() }
  :: atomic { (rstate == COMPLETED || rstate == INDET || rstate == ABANDONED) ->
              delete_record(); end_window() }                          /* retention passed after it settled */
#ifndef NO_RESOLVE
  :: atomic { (rstate == INDET || rstate == ABANDONED) && resolves < MAXRESOLVE ->   /* MemoryStore.resolve (:216-235) */
       resolves++;
       printf("MSC: an operator resolves the record\n");
       if
       :: rstate = COMPLETED; record_outcome(OPERATOR)                 /* { outcome } */
       :: delete_record(); end_window()                                /* { released: true } */
       fi }
#endif
  CRASH(0)
  LATE(0)
#if N > 1
  CRASH(1)
  LATE(1)
#endif
#if N > 2
  CRASH(2)
  LATE(2)
#endif
#if N > 3
  CRASH(3)
  LATE(3)
#endif
  od
}

init {
  byte w = 0;
  atomic {
    do
    :: w < N -> run worker(w); w++
    :: else -> break
    od
  }
}

#ifdef LIVENESS
/* The holder of an in-progress record is gone: crashed, or no longer acting for that claim. */
#define STUCK (rstate == INPROG && rowner != 0 && \
               (crashed[WORKER(rowner)] || \
                (hold[WORKER(rowner)] != rowner && late_o[WORKER(rowner)] != rowner)))
/* Once its holder is gone, an in-progress record eventually settles, is taken over, or expires. */
ltl settles { [] (STUCK -> <> !STUCK) }
#endif
