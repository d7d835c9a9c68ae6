// The one case that stands in for the approval cases of a store still gaining approvals
// (`skipApprovals: 'not-implemented-yet'`): it says, in the test report, that they were not run,
// and fails once the store has decideApproval, so the option cannot outlive its reason.
import { fail } from '../check.js';
import { type CaseDefinition, defineCase } from './case-context.js';

export function approvalsNotRunCase(reason: 'not-implemented-yet'): CaseDefinition {
  return defineCase(
    `approvals: NOT RUN (skipApprovals: '${reason}'): the store must not have decideApproval yet`,
    async (c) => {
      if (reason !== 'not-implemented-yet')
        fail(`skipApprovals must be 'not-implemented-yet', got ${String(reason)}`);
      for (const store of [c.store, ...c.stores.peers]) {
        if (typeof store.decideApproval === 'function') {
          fail(
            'the store has decideApproval: remove skipApprovals from its conformance options so the ' +
              'approval cases run',
          );
        }
      }
    },
  );
}
