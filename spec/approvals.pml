/*
 * Approvals used once: the model of an approval as a record state BEFORE the claim, consumed by
 * the claim in its own atomic step (docs/approvals.md; packages/core/src/memory/approvals.ts and
 * packages/core/src/store/approval-decisions.ts are the code; spec/README.md, "Approvals").
 *
 * One key. N workers call it, each up to MAXCLAIMS times (resumes, replays, processes), with
 * `approval: 'required'`; worker w's arguments have fingerprint w % 2 when TWOARGS (the same
 * key with other arguments: keyArguments naming only some), else 0. An operator makes up to
 * MAXDECIDE decisions, each an approval or a denial, always for fingerprint 0 (the arguments it
 * looked at). A body may fail and release the key (IDEMPOTENT), which ends the life: the next
 * claim asks again. Every store operation is one atomic step (d_step), as the contract says.
 *
 * Safety, asserted where a body is entered:
 *  - every entry consumes an approval of its own: entries <= approvals that took effect;
 *  - only the approved arguments run: no entry with fingerprint 1;
 *  - a denial stays a denial: no entry in a life after a denial took effect in it.
 * Known-bad variants, each caught:
 *  - BAD_CONSUME_READ_THEN_WRITE: the claim reads `approved`, then writes its claim in a later
 *    step (two claims use one approval);
 *  - BAD_APPROVAL_ANY_ARGS: the claim of an approved record does not compare the fingerprint;
 *  - BAD_DENIAL_OVERRIDE: an approval overwrites a denial.
 */
#ifndef N
#define N 3
#endif
#ifndef MAXCLAIMS
#define MAXCLAIMS 2
#endif
#ifndef MAXDECIDE
#define MAXDECIDE 2
#endif

/* Record states (RecordState, store-records.ts / approval-records.ts). */
#define NONE      0
#define AWAITING  1
#define APPROVED  2
#define DENIED    3
#define INPROG    4
#define COMPLETED 5

byte rstate = NONE;
byte rfp = 0;              /* the record's fingerprint */
byte rowner = 0;           /* the holder of an INPROG record: worker + 1 */
byte approvals = 0;        /* approvals that took effect (a record became APPROVED) */
byte entries = 0;          /* bodies entered */
bool denied_life = false;  /* a denial took effect in this life of the key */
byte decisions = 0;

#ifdef TWOARGS
#define FP(w) ((w) % 2)
#else
#define FP(w) 0
#endif

#ifdef BAD_APPROVAL_ANY_ARGS
#define CONFLICTS(f) (false)
#else
#define CONFLICTS(f) (rfp != (f))   /* claimConflicts: an approval binds the arguments */
#endif

/* The end of a life: the record is deleted (release), so the next claim asks anew. */
inline delete_record() {
  rstate = NONE; rowner = 0; denied_life = false
}

proctype worker(byte w) {
  byte claims = 0;
  byte seen;
  bool mine;
  do
  :: claims < MAXCLAIMS ->
     claims++;
     mine = false;
#ifdef BAD_CONSUME_READ_THEN_WRITE
     /* Read, then write in another step: the bug the contract forbids. */
     d_step { seen = rstate; if :: rstate != NONE && CONFLICTS(FP(w)) -> seen = 99 :: else -> skip fi }
     if
     :: seen == APPROVED -> d_step { rstate = INPROG; rowner = w + 1; mine = true }
     :: seen == NONE -> d_step { if :: rstate == NONE -> rstate = AWAITING; rfp = FP(w) :: else -> skip fi }
     :: else -> skip
     fi;
#else
     d_step {   /* claim_decide with approval: 'required' (memory/claim.ts, memory/approvals.ts) */
       if
       :: rstate == NONE -> rstate = AWAITING; rfp = FP(w)         /* approval_required */
       :: rstate != NONE && CONFLICTS(FP(w)) -> skip               /* conflict */
       :: rstate != NONE && !CONFLICTS(FP(w)) && rstate == APPROVED ->
          rstate = INPROG; rowner = w + 1; mine = true             /* acquired: consumed */
       :: else -> skip                /* approval_required, denied, busy, completed */
       fi
     }
#endif
     if
     :: mine ->
        d_step {
          assert(entries < approvals);           /* each entry consumed an approval of its own */
          assert(FP(w) == 0);                    /* only the approved arguments run */
          assert(!denied_life);                  /* a denial stays a denial */
          entries++
        };
        if
        :: d_step { if :: rstate == INPROG && rowner == w + 1 -> rstate = COMPLETED :: else -> skip fi }
        :: d_step { if :: rstate == INPROG && rowner == w + 1 -> delete_record() :: else -> skip fi }
        fi
     :: else -> skip
     fi
  :: else -> break
  od
}

proctype operator() {
  do
  :: decisions < MAXDECIDE ->
     decisions++;
     if
     :: d_step {   /* decideApproval(approved: true), fingerprint 0 (approvalDecision) */
          if
          :: rstate == NONE -> rstate = APPROVED; rfp = 0; approvals++
          :: rstate != NONE && rfp != 0 -> skip                        /* conflict */
          :: rstate == AWAITING && rfp == 0 -> rstate = APPROVED; approvals++
#ifdef BAD_DENIAL_OVERRIDE
          :: rstate == DENIED && rfp == 0 -> rstate = APPROVED; approvals++
#endif
          :: else -> skip            /* approved again, denied stands, consumed */
          fi
        }
     :: d_step {   /* decideApproval(approved: false), fingerprint 0 */
          if
          :: rstate == NONE -> rstate = DENIED; rfp = 0; denied_life = true
          :: rstate != NONE && rfp != 0 -> skip
          :: (rstate == AWAITING || rstate == APPROVED) && rfp == 0 -> rstate = DENIED; denied_life = true
          :: else -> skip            /* denied again, consumed */
          fi
        }
     fi
  :: else -> break
  od
}

init {
  atomic {
    byte w = 0;
    do
    :: w < N -> run worker(w); w++
    :: else -> break
    od;
    run operator()
  }
}
