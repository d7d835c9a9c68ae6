/*
 * toolfence.pml -- a Promela model of the claim / lease / fence protocol of toolfence.
 *
 * One idempotency key, N workers calling it, a store whose operations are single atomic steps
 * exactly as MemoryStore implements them (packages/core/src/memory/*.ts), and workers
 * that follow Guard.run (packages/core/src/guard/guard.ts), claimLoop (claim-loop.ts), runAttempt
 * (attempt.ts) and recordOutcome (outcome-recording.ts) with a LeaseKeeper (lease-keeper.ts).
 * spec/README.md maps every step to the code (the model
 * names functions, not line numbers, so that it does not go stale when lines move).
 *
 * The environment (proctype env) may at any time: let the current lease run out, expire a record
 * past its retention (a settled one, or an in-progress one whose lease ran out: lease+retention),
 * let an operator resolve an indeterminate/abandoned record, crash a worker, let the body of
 * a superseded attempt return late (recordLate), LOSE the record (MAXLOSS times: retention cut
 * short, `forget`, a store restart or failover that loses records: a delete at any moment, in any
 * state, live lease or not), and deliver an acquired claim's reply after the claimer's lease view
 * lapsed (MAXLATE times: the claim lands, others act, then the claimer reads the reply).
 * A stall is a worker that is not scheduled while the environment acts (leases may run out).
 *
 * The guard modelled keeps rules G1 and G2 of docs/guarantee.md:
 *   G1  once a guard.run call entered its body it never enters it again (IDEMPOTENT: not more than
 *       maxAttempts times); a superseded attempt only reads: it claims again and completed ->
 *       replay, busy -> wait (EFFECTFUL with its own value: answer it), acquired -> complete the
 *       new claim with its own value, else EFFECTFUL markIndeterminate (RecordLost), IDEMPOTENT
 *       run again while its own executions < maxAttempts, else release (ExecutionAbandonedError).
 *   G2  the body is entered only while the claimer's lease view (counted from the claim's SEND)
 *       is live; a reply that came after the view lapsed -> renew once: renewed -> enter; lost ->
 *       claim again as a fresh caller (the same call).
 *
 * Compile-time switches (spin -a -DNAME ...):
 *   MODE=1           at-most-once (EFFECTFUL)      MODE=0  at-least-once (IDEMPOTENT)
 *   LIVENESS         add the LTL property `settles` (run pan with -a -f)
 *   TOLD_PER_LIFE    stricter "what callers are told" check (see README)
 *   LASTCLAIMS, MAXCRASH, MAXLOST, MAXRESOLVE, NO_RESOLVE, MAXLOSS, MAXLATE   bounds (see README)
 *   SCRIPTED_CLAIM_ONLY  every claim is the one-step scripted claim (no native claim step: the
 *                        model before RedisStore's native claim)
 *   RESOLVE_SETTLED_ONLY  the operator settles indeterminate and abandoned records only, not an in-
 *                    progress one whose holder is gone (a bound: it keeps the bigger checks' state
 *                    counts as they were; the quick effectful and idempotent-gone-holder checks
 *                    include it)
 *   Rules the model found wrong, kept so that the check bites if they come back (README):
 *   GUARD_NOTFOUND_ANY_KIND    recordOutcome answers not_found with its own value for IDEMPOTENT too
 *   MEMSTORE_RENEW             MemoryStore.renew: expiresAtMs = max(expiresAtMs, lease), no retention
 *   GUARD_OWN_COMPLETION       isOwnCompletion on fence and owner only (OPEN: still the code's rule;
 *                              the model's default is the proposed fix)
 *   Known-bad rules, each must produce a counterexample:
 *   BAD_COMPLETE_UNFENCED      complete without the fence/owner condition
 *   BAD_CLAIM_READ_THEN_WRITE  claim as two atomic steps: read, then write
 *   BAD_NATIVE_TAKEOVER        a native claim (Redis >= 7) that found a record in progress takes
 *                              it over on the client's judgement of the lease (IDEMPOTENT)
 *   BAD_FENCE_ONLY             holder check on the fence alone (no owner)
 *   BAD_EFFECTFUL_TAKEOVER     at-most-once takes over an expired lease like at-least-once
 *   BAD_LEASE_NEVER_EXPIRES    leases never run out (liveness must fail)
 *   BAD_RESOLVE_UNCONDITIONAL  the operator's resolve settles whatever record is there, not only
 *                              the one the operator read (no `expect`)
 *   BAD_RECLAIM_AFTER_BODY     the guard before G1 (claimLoop then): a superseded attempt
 *                              claims again as if new and, if acquired, runs the body again; and
 *                              complete -> not_found answers the own value (EFFECTFUL, lease kept)
 *   BAD_LATE_REPLY             the guard before G2: a claim reply that arrives after the lease
 *                              view lapsed enters the body without renewing first
 *   BAD_DECIDE_WHILE_RUNNING   the guard before issue #27 (EFFECTFUL): a body still running after
 *                              its caller was answered (a timeout) has its record marked
 *                              indeterminate and its lease given up, so an operator may settle
 *                              it (release it: a retry runs a second body) while it still runs
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
#ifndef MAXLOSS
#define MAXLOSS 1         /* records the store loses (forget, restart, failover, retention cut short) */
#endif
#ifndef MAXLATE
#define MAXLATE 1         /* acquired claim replies that reach the claimer after its lease view lapsed */
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
byte op_o;         /* the holder (owner, fence) of the record the operator read and is deciding */
byte op_f;         /* about (0: none): its resolve carries it as `expect` */
byte lost_replies;
byte losses;
byte late_replies;
byte late_pending; /* owner whose acquired reply is late and not yet read (0: none) */
byte body_o[N];    /* owner whose body worker w runs in `holding`, not yet settled (0: none) */

/* ---- ghost state: what happened in the current life of the key ----
 * A life of the key ends when its record is deleted (released, resolved as released, or past
 * retention); the next claim starts a new life at fence 1. */
byte g_owner;      /* owner of the latest acquisition in the current life (0: none) */
byte g_fence;      /* highest fence acquired in the current life */
byte execs;        /* body executions of attempts acquired in the current life */
byte recorded;     /* outcome recorded in the current life (0: none) */
byte wexecs;       /* body executions within the current retention window of the key: ends
                      with a release, an operator's release, or a full retention window passing
                      after the record settled or its lease ran out (docs/design.md, "The guarantee") */
#ifdef TOLD_PER_LIFE
bool w_cur[N];     /* worker w's current attempt belongs to the current life */
byte w_rec[N];     /* outcome recorded in the life of worker w's current attempt (0: none) */
#endif
bool b_life[N];    /* the life in which worker w's call last entered its body is the current one */

#ifdef BAD_FENCE_ONLY
#define IS_HOLDER(o, f) (rfence == (f))
#else
#define IS_HOLDER(o, f) (rfence == (f) && rowner == (o))   /* isHolder in memory/record-codec.ts */
#endif

/* per-worker ghosts, unrolled for up to 4 workers */
#if N == 1
#define FOR_WORKERS(M) M(0)
#elif N == 2
#define FOR_WORKERS(M) M(0) M(1)
#elif N == 3
#define FOR_WORKERS(M) M(0) M(1) M(2)
#else
#define FOR_WORKERS(M) M(0) M(1) M(2) M(3)
#endif
#define END_BODY_LIFE(W) b_life[W] = false;
#ifdef TOLD_PER_LIFE
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

/* The store grants the key to (o, f) (a new record, or a takeover). Fences strictly increase
 * within a life; g_owner is the only holder whose writes may apply (holder_write). */
inline granted(o, f) {
  printf("MSC: owner %d is granted fence %d (highest fence so far in this life: %d)\n", o, f, g_fence);
  assert(f > g_fence);
  g_fence = f;
  g_owner = o
}

/* Worker `me`'s call enters its body as holder (o, f) (runAttempt, attempt.ts, starts the body). Checked
 * here, where the body is entered:
 * - ENTRY_CURRENT (G2): the store still holds this very claim, in progress: nobody was told
 *   `indeterminate` or `abandoned` for it, granted a takeover of it, or given a new life of the key
 *   since it was granted (G2 gives more, a live lease, but a lease that ran out unnoticed by
 *   anyone is harmless: a renewal would still be accepted);
 * - per call (G1): one guard.run call, across all its claims, enters its body at most once
 *   (EFFECTFUL) or maxAttempts times (IDEMPOTENT), whatever happened to its records;
 * - per life and per retention window of the key, as before. */
inline enter_body() {
  printf("MSC: owner %d (fence %d) enters the body: entry %d of this call, %d of this life, %d of this retention window\n", o, f, cexecs + 1, execs + 1, wexecs + 1);
  assert(rstate == INPROG && rfence == f && rowner == o);
  cexecs++;
  execs++;
  wexecs++;
  b_life[me] = true;
#if MODE == AT_MOST_ONCE
  assert(cexecs <= 1);
  assert(execs <= 1);
  assert(wexecs <= 1);
#else
  assert(cexecs <= MAXATT);
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

/* An operator's resolution is applied only to the attempt the operator read: its "it happened,
 * outcome X" / "it did not happen" is about that call. Applied to another attempt (a later life of
 * the key, fence 1 again, another owner), it records the old call's outcome as the new call's, or
 * frees a key whose new call may have run (the window restarts on a false "did not happen"). */
#define NOT_RUNNING_HERE(W) assert(crashed[W] || !lease_live || (body_o[W] != rowner && late_o[W] != rowner));
inline operator_write() {
  printf("MSC: the store applies the operator's resolution to owner %d (the operator read owner %d)\n", rowner, op_o);
  assert(rowner == op_o && rfence == op_f);
  /* Issue #27: never while the holder's body still runs and its lease is live (a live holder,
   * its body unsettled, its lease renewed): its effect may still happen, and a release would let
   * a retry run a second body beside it. A holder whose lease ran out is presumed gone (a stall
   * past the lease is the lease's own limit, as everywhere); `lease_live` stays as it was when
   * the holder itself marked its record, false when a claim marked it after the lease ran out. */
  FOR_WORKERS(NOT_RUNNING_HERE)
  skip
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

/* G1, EFFECTFUL: a superseded call whose own body returned v finds the key busy and answers v.
 * Allowed only because the life its body ran in is gone (the record was lost or released): the
 * in-progress record belongs to a later life, whose outcome is that life's, not this call's. */
inline tell_own_lost(v, w) {
  printf("MSC: a caller is told its own value %d while a later life of the key is in progress\n", v);
  assert(rstate == INPROG && !b_life[w])
}

/* The record is deleted; a new life of the key begins at the next claim. */
inline delete_record() {
  rstate = NONE; rfence = 0; rattempt = 0; rowner = 0; routcome = 0; lease_live = false; gap = false;
  g_owner = 0; g_fence = 0; execs = 0; recorded = 0;
  FOR_WORKERS(END_BODY_LIFE)
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

/* ... or the store lost it: the window it was in is not counted (the store forgot; executions
 * after a loss are outside the guarantee), and a new one begins. */
inline lose_window() {
  wexecs = 0;
  printf("MSC: (the store lost the record: its retention window is not counted)\n")
}

/* ---- store operations: each is one atomic step, as MemoryStore ---- */

/* MemoryStore.claim, deciding on a snapshot (s_*) of the record. The good model takes the
 * snapshot in the same atomic step; BAD_CLAIM_READ_THEN_WRITE does not. */
inline claim_decide(o, f, res, s_state, s_fence, s_att, s_live, s_owner) {
  if
  :: s_state == NONE ->                                   /* no live record: create, fence 1 */
       rstate = INPROG; rfence = 1; rattempt = 1; rowner = o; routcome = 0; lease_live = true; gap = true;
       f = 1; res = R_ACQUIRED;
       granted(o, 1)
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
       granted(o, f)
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
inline st_complete(o, f, v, res) {
  if
  :: rstate == NONE -> res = X_NOTFOUND                              /* :163 */
  :: rstate != NONE && !COMPLETE_ALLOWED(o, f) -> res = X_STALE      /* :164-166 */
  :: rstate != NONE && COMPLETE_ALLOWED(o, f) ->                     /* :167-172 */
       holder_write(o);
       rstate = COMPLETED; gap = false; record_outcome(v); res = X_OK
  fi;
  printf("MSC: owner %d (fence %d) complete with %d -> %e\n", o, f, v, res)
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

/* ---- a worker: a caller of the guarded tool, Guard.run / claimLoop (claim-loop.ts) ----
 * Steps that only change a worker's own variables are folded into the atomic step of the store
 * operation that follows them (nobody else can observe them in between), so each atomic block
 * below is: local decisions + ONE store operation + what the worker does with its answer.
 * One run of a worker is a sequence of guard.run calls (the caller calls again after an error);
 * cexecs and v are the current call's own, kept across all the claims of that call. */

/* a new guard.run call begins (the caller called again) */
#define NEW_CALL cexecs = 0; v = 0; b_life[me] = false

/* after an error reached the caller: the caller calls again (a new guard.run call), or stops */
#define CALL_AGAIN_OR_STOP \
    TOLD_LEAVE(me); o = 0; f = 0; res = 0; lost = false; NEW_CALL; \
    if \
    :: goto at_claim \
    :: done[me] = true; goto finished \
    fi

/* busy: waitForSettle, then the same call claims again; or OutcomePendingError past waitTimeoutMs */
#define WAIT_OR_GIVE_UP \
    if \
    :: TOLD_LEAVE(me); o = 0; f = 0; res = 0; lost = false; goto at_claim \
    :: CALL_AGAIN_OR_STOP \
    fi

/* SUPERSEDED: the same call claims again (claimLoop, claim-loop.ts) */
#define CLAIM_AGAIN \
    TOLD_LEAVE(me); o = 0; f = 0; res = 0; lost = false; \
    goto at_claim

/* the call returned a value */
#define RETURN_VALUE \
    TOLD_LEAVE(me); o = 0; f = 0; res = 0; lost = false; NEW_CALL; done[me] = true; \
    goto finished

/* recordLate: the body may still return later, and its value be offered to complete */
#define MAY_RETURN_LATE \
    if \
    :: late_o[me] == 0 -> late_o[me] = o; late_f[me] = f; late_k[me] = LATE_RECORD \
    :: true -> skip \
    fi

/* isOwnCompletion: a stale answer whose record is this holder's own completion (a retried
 * complete whose first try was applied). As the guard had it (GUARD_OWN_COMPLETION), fence and
 * owner only, which an operator's resolution of the holder's record also matches; the model's
 * default is the fix (outcome-recording.ts isOwnCompletion): the recorded outcome must be the one sent. */
#ifdef GUARD_OWN_COMPLETION
#define OWN_COMPLETION (rstate == COMPLETED && rfence == f && rowner == o)
#else
#define OWN_COMPLETION (rstate == COMPLETED && rfence == f && rowner == o && routcome == v)
#endif
/* recordOutcome (outcome-recording.ts) on not_found. G1: superseded like stale (claim again, read the answer). Before G1
 * (BAD_RECLAIM_AFTER_BODY, the guard before G1) an EFFECTFUL attempt that did not see its lease lost
 * answered with its own value. GUARD_NOTFOUND_ANY_KIND is the rule before the model found
 * TOLD_PER_LIFE broken by it (any kind answered with its own value). */
#if defined(GUARD_NOTFOUND_ANY_KIND)
#define NOTFOUND_ANSWERS (!lost)
#elif defined(BAD_RECLAIM_AFTER_BODY)
#define NOTFOUND_ANSWERS (!lost && MODE == AT_MOST_ONCE)
#else
#define NOTFOUND_ANSWERS (false)
#endif
/* G1: may this call enter its body on an acquired claim? Before G1 it always did. */
#ifdef BAD_RECLAIM_AFTER_BODY
#define MAY_ENTER (true)
#elif MODE == AT_MOST_ONCE
#define MAY_ENTER (cexecs == 0)
#else
#define MAY_ENTER (cexecs == 0 || (v == 0 && cexecs < MAXATT))
#endif
/* G1: an EFFECTFUL call whose own body returned v answers v when its re-claim finds the key busy */
#ifdef BAD_RECLAIM_AFTER_BODY
#define BUSY_ANSWERS_OWN (false)
#else
#define BUSY_ANSWERS_OWN (MODE == AT_MOST_ONCE && v != 0)
#endif

/* The answer of complete (recordOutcome; G1's re-record of the call's own value) */
#define COMPLETE_ANSWER \
      if \
      :: res == X_OK || (res == X_STALE && OWN_COMPLETION) ->   /* recorded */ \
           tell_own(v, me); RETURN_VALUE \
      :: res == X_NOTFOUND && NOTFOUND_ANSWERS ->   /* the record vanished: own value */ \
           tell_own(v, me); RETURN_VALUE \
      :: else -> printf("MSC: owner %d is superseded: it claims again\n", o); CLAIM_AGAIN   /* SUPERSEDED */ \
      fi

/* enter the body as holder (o, f) (runAttempt, attempt.ts) */
#define ENTER \
      enter_body(); res = 0; lost = false; TOLD_ENTER(me); body_o[me] = o; \
      goto holding

/* G1: a call that already ran its body acquired a new claim (the record vanished or was released,
 * or an IDEMPOTENT takeover): it does not run the body again, except IDEMPOTENT within maxAttempts */
#define READ_ACQUIRED \
      if \
      :: v != 0 ->                                  /* complete the new claim with its own value */ \
           res = 0; TOLD_ENTER(me); goto rerecord \
      :: v == 0 && MODE == AT_MOST_ONCE ->          /* markIndeterminate (RecordLost) */ \
           res = 0; goto mark_lost \
      :: v == 0 && MODE == AT_LEAST_ONCE ->         /* own executions used up: release, */ \
           res = 0; goto release_exhausted          /* ExecutionAbandonedError */ \
      fi

/* The answer of a claim (claimLoop, claim-loop.ts). */
#define CLAIM_ANSWER \
      if \
      :: res == R_ACQUIRED ->  \
           SET_HOLD(me, o); \
           if \
           :: REPLY_LATE -> LATE_REPLY; goto late_claim  /* the reply comes after the lease view lapsed */ \
           :: true -> skip                               /* the reply comes in time: the view is live */ \
           fi; \
           if \
           :: MAY_ENTER -> ENTER                         /* run the body (runAttempt) */ \
           :: else -> READ_ACQUIRED \
           fi \
      :: res == R_BUSY && BUSY_ANSWERS_OWN ->   /* G1, EFFECTFUL: its own value */ \
           tell_own_lost(v, me); \
           RETURN_VALUE \
      :: res == R_BUSY && !BUSY_ANSWERS_OWN ->  /* waitForSettle, then claim again, */ \
           WAIT_OR_GIVE_UP                       /* or OutcomePendingError past waitTimeoutMs */ \
      :: res == R_COMPLETED ->             /* deduplicated (answerSettled) */ \
           tell(routcome); \
           RETURN_VALUE \
      :: res == R_INDET || res == R_ABANDONED ->   /* the caller gets an error (answerSettled) */ \
           CALL_AGAIN_OR_STOP \
      fi

/* The reply of a store operation that took effect is lost (at most MAXLOST times in a run). */
#define REPLY_LOST (lost_replies < MAXLOST)
#define LOSE_REPLY lost_replies++; printf("MSC: the reply to owner %d is lost\n", o)
/* The reply of an acquired claim reaches the claimer after its lease view lapsed (MAXLATE times). */
#define REPLY_LATE (late_replies < MAXLATE)
#define LATE_REPLY late_replies++; late_pending = o; printf("MSC: the acquired reply to owner %d arrives after its lease view lapsed\n", o)

proctype worker(byte me) {
  byte seq;        /* claims sent so far */
  byte o;          /* owner id of the current claim (unique per claim, as in claimLoop) */
  byte f;          /* fence acquired */
  mtype res;
  bool lost;       /* leaseLost !== undefined (attempt.ts Attempt) */
  byte cexecs;     /* G1: times the current guard.run call entered its body (all its claims) */
  byte v;          /* G1: the value the current call's own body returned (0: none) */
#if defined(BAD_CLAIM_READ_THEN_WRITE) || defined(BAD_NATIVE_TAKEOVER)
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
#ifndef SCRIPTED_CLAIM_ONLY
      /* RedisStore on Redis >= 7 claims natively: SET k <in-progress record> NX PX <lease +
       * retention> GET, one atomic step. No record: created, fence 1 (claim_decide's first
       * branch); a settled one: replied as found, judged by the client (claim_decide's settled
       * branches). A record in progress is only read: the client sends the claim script, a later
       * step (native_found), which decides by the store's clock. The scripted claim (Redis 6.2)
       * is the `true` branch: one step for every state. */
      if
      :: rstate == INPROG ->
#ifdef BAD_NATIVE_TAKEOVER
           s_fence = rfence; s_att = rattempt; s_owner = rowner;
#endif
           printf("MSC: owner %d's native claim finds the record in progress: the claim script decides\n", o);
           goto native_found
      :: true -> skip
      fi;
#endif
      claim_decide(o, f, res, rstate, rfence, rattempt, lease_live, rowner);
#endif
      if
      :: REPLY_LOST -> LOSE_REPLY; res = 0; f = 0; goto resend_claim
      :: true -> skip
      fi;
      CLAIM_ANSWER
    }

native_found:                              /* the claim script after a native claim found it in progress */
    atomic {
#ifdef BAD_NATIVE_TAKEOVER
      /* Known-bad: the client judges the lease it read by its own clock (which may be off either
       * way: any judgement) and takes over natively (SET XX of the next attempt's record), with
       * what it read, without the store's check at the write. */
      if
      :: MODE == AT_LEAST_ONCE && rstate != NONE && s_owner != o && s_att < MAXATT ->
           rstate = INPROG; rfence = s_fence + 1; rattempt = s_att + 1; rowner = o; routcome = 0;
           lease_live = true; gap = true; f = rfence; res = R_ACQUIRED;
           printf("MSC: owner %d takes over natively on a lease its own clock judged lapsed\n", o);
           granted(o, f)
      :: else -> claim_decide(o, f, res, rstate, rfence, rattempt, lease_live, rowner)
      fi;
      s_fence = 0; s_att = 0; s_owner = 0;
#else
      claim_decide(o, f, res, rstate, rfence, rattempt, lease_live, rowner);
#endif
      if
      :: REPLY_LOST -> LOSE_REPLY; res = 0; f = 0; goto resend_claim
      :: true -> skip
      fi;
      CLAIM_ANSWER
    }

resend_claim:                              /* claimAgain (claim-loop.ts): the same claim, once more */
    atomic {
      claim_decide(o, f, res, rstate, rfence, rattempt, lease_live, rowner);
      CLAIM_ANSWER
    }
    /* (a second failure is StoreUnavailableError: not modelled, see README) */

late_claim:                                /* an acquired reply, read after the lease view lapsed */
    atomic {
      late_pending = 0;
      if
      :: MAY_ENTER ->
#ifdef BAD_LATE_REPLY
           ENTER                           /* before G2: the body is entered anyway */
#else
           st_renew(o, f, res);            /* G2: renew once */
           if
           :: res == X_OK -> ENTER         /* the view restarts from the renewal: enter */
           :: else ->                      /* lost: never entered, ask as a fresh caller */
                printf("MSC: owner %d did not enter its body: it claims again as a fresh caller\n", o);
                SET_HOLD(me, 0);
                CLAIM_AGAIN
           fi
#endif
      :: else -> READ_ACQUIRED             /* G1: no body to enter; the writes are fenced */
      fi
    }

rerecord:                                  /* G1: complete the new claim with its own value */
    atomic {
      st_complete(o, f, v, res);
      SET_HOLD(me, 0);
      if
      :: REPLY_LOST -> LOSE_REPLY; res = 0; goto complete_retry
      :: true -> skip
      fi;
      COMPLETE_ANSWER
    }

mark_lost:                                 /* G1, EFFECTFUL: markIndeterminate (RecordLost), */
    atomic {                               /* IndeterminateOutcomeError */
      st_mark(o, f, res);
      SET_HOLD(me, 0);
      CALL_AGAIN_OR_STOP
    }

release_exhausted:                         /* G1, IDEMPOTENT: own executions used up: release, */
    atomic {                               /* ExecutionAbandonedError */
      st_release(o, f, res);
      SET_HOLD(me, 0);
      CALL_AGAIN_OR_STOP
    }

holding:                                   /* runAttempt (attempt.ts) */
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
         body_o[me] = 0;                   /* (a body still running goes on as late_o) */
         if
         :: skip
         :: !lost -> lost = true;          /* the watchdog fired (renewals failing, lease estimate past) */
            printf("MSC: owner %d: its watchdog fires (lease view past, renewals failing)\n", o)
         fi;
         if
         :: true ->                        /* the body returned: recordOutcome */
              v = o;
              st_complete(o, f, v, res);
              SET_HOLD(me, 0);
              if
              :: REPLY_LOST -> LOSE_REPLY; res = 0; goto complete_retry
              :: true -> skip
              fi;
              COMPLETE_ANSWER
         :: lost ->                        /* the body threw the LeaseLostError: SUPERSEDED */
              printf("MSC: owner %d saw its lease lost; its body throws LeaseLostError: superseded\n", o);
              SET_HOLD(me, 0);
              CLAIM_AGAIN
         :: lost ->                        /* grace over, body still running: recordLate, SUPERSEDED */
              printf("MSC: owner %d saw its lease lost; its body is still running past the grace: superseded\n", o);
              SET_HOLD(me, 0);
              MAY_RETURN_LATE;
              CLAIM_AGAIN
#if MODE == AT_MOST_ONCE
         :: true ->                        /* the body threw: markIndeterminate */
              st_mark(o, f, res);
              SET_HOLD(me, 0);
              CALL_AGAIN_OR_STOP
#ifdef BAD_DECIDE_WHILE_RUNNING
         :: true ->                        /* timed out: markIndeterminate, the lease given up, */
              st_mark(o, f, res);          /* the body still running (recordLate) */
              SET_HOLD(me, 0);
              MAY_RETURN_LATE;
              CALL_AGAIN_OR_STOP
#else
         :: late_o[me] == 0 ->             /* timed out (G4): IndeterminateOutcomeError to the caller; */
              SET_HOLD(me, 0);             /* the claim is kept in progress and renewed until the */
              late_o[me] = o; late_f[me] = f; late_k[me] = LATE_KEEP;   /* body settles (issue #27) */
              CALL_AGAIN_OR_STOP
#endif
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

complete_retry:                            /* completeWithRetry (outcome-recording.ts): the same complete again */
    atomic {
      st_complete(o, f, v, res);
      COMPLETE_ANSWER
    }

finished:
    skip
  } unless { crashed[me] }
}

/* ---- the environment ---- */

/* crash worker W (it stops forever: the escape `unless { crashed[me] }` fires at its next step);
 * a late reply it never read no longer holds back retention */
#define CRASH(W) \
  :: atomic { crashes < MAXCRASH && !crashed[W] && !done[W] -> crashed[W] = true; crashes++; \
       if \
       :: late_pending != 0 && WORKER(late_pending) == W -> late_pending = 0 \
       :: else -> skip \
       fi; \
       printf("MSC: worker %d crashes\n", W) }

/* the body of a superseded or timed-out attempt of worker W returns (recordLate,
 * settleAfterTimeout), or fails (settleAfterTimeout releases); a crashed worker's background
 * body is gone with it. The renewals settleAfterTimeout keeps up are not steps of their own: a
 * renewal only keeps the lease live, which is the same as the environment not letting it run out
 * (a renewal after the lease ran out and before anyone acted on it changes nothing observable). */
/* a kept body that fails after its caller was answered: IDEMPOTENT releases, EFFECTFUL marks */
#if MODE == AT_MOST_ONCE
#define LATE_FAILS(o, f, r) st_mark(o, f, r)
#else
#define LATE_FAILS(o, f, r) st_release(o, f, r)
#endif
#define LATE(W) \
  :: atomic { late_o[W] != 0 && !crashed[W] -> \
       printf("MSC: the late body of owner %d returns\n", late_o[W]); \
       st_complete(late_o[W], late_f[W], late_o[W], eres); \
       late_o[W] = 0; late_f[W] = 0; late_k[W] = 0; eres = 0 } \
  :: atomic { late_k[W] == LATE_KEEP && !crashed[W] -> \
       printf("MSC: the late body of owner %d fails\n", late_o[W]); \
       LATE_FAILS(late_o[W], late_f[W], eres); \
       late_o[W] = 0; late_f[W] = 0; late_k[W] = 0; eres = 0 }

#ifdef RESOLVE_SETTLED_ONLY
#define SETTLEABLE (rstate == INDET || rstate == ABANDONED)
#else
#define SETTLEABLE (rstate == INDET || rstate == ABANDONED || (rstate == INPROG && !lease_live))
#endif
active proctype env() {
  mtype eres;
end_env:
  do
#ifndef BAD_LEASE_NEVER_EXPIRES
  :: atomic { rstate == INPROG && lease_live -> lease_live = false;
              printf("MSC: the lease of owner %d runs out\n", rowner) }   /* the lease deadline passes */
#endif
  :: atomic { rstate == INPROG && !lease_live && rowner != late_pending ->   /* past retention (MemoryStore.live); */
                                                                      /* a reply is not late by a whole window */
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
  :: atomic { rstate != NONE && losses < MAXLOSS ->                    /* the store loses the record: */
       losses++;                                                      /* forget, a restart or failover */
       printf("MSC: the store loses the record (state %d, owner %d, lease live %d)\n", rstate, rowner, lease_live);
       delete_record(); lose_window() }                               /* that loses it, retention cut short */
#ifndef NO_RESOLVE
  /* What an operator may settle (decideResolve, memory/operator-writes.ts; resolveDecision,
   * store-input.ts): indeterminate, abandoned, or in progress under a lease that ran out (its
   * holder is gone, issue #27). In progress under a live lease is `holder_alive` (a forced
   * resolution is the operator's own call, outside the model). */
  /* An operator reads the record (get/list: inspect, the console's page) and decides later, on
   * what it read; it may read again at any time (the console reloaded, inspect rerun). */
  :: atomic { SETTLEABLE && resolves < MAXRESOLVE &&
              !(op_o == rowner && op_f == rfence) ->
       op_o = rowner; op_f = rfence;
       printf("MSC: an operator reads the record of owner %d (fence %d)\n", op_o, op_f) }
  /* ... then resolves it with `expect` = what it read: decideResolve (memory/operator-writes.ts)
   * settles only a record with that holder; another one is `changed`, nothing written. */
#ifdef BAD_RESOLVE_UNCONDITIONAL
  :: atomic { op_o != 0 && SETTLEABLE && resolves < MAXRESOLVE ->
#else
  :: atomic { op_o != 0 && SETTLEABLE && resolves < MAXRESOLVE &&
              rowner == op_o && rfence == op_f ->
#endif
       resolves++;
       printf("MSC: the operator resolves the record it read (owner %d, fence %d)\n", op_o, op_f);
       operator_write();
       op_o = 0; op_f = 0;
       if
       :: rstate = COMPLETED; gap = false; record_outcome(OPERATOR)    /* { outcome } */
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
