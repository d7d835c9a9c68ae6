// The operator cases of the conformance suite (listing, resolution records): registered by
// cases.ts with one line, `addOperatorCases(add)`.
import { addListingCases } from './listing.js';
import { addResolutionCases } from './resolutions.js';
import type { AddCase, OperatorCaseContext } from './support.js';

export type { OperatorCaseContext } from './support.js';

/** Register every operator case with the suite's `add`. */
export function addOperatorCases<C extends OperatorCaseContext>(add: AddCase<C>): void {
  addListingCases(add as unknown as AddCase<OperatorCaseContext>);
  addResolutionCases(add as unknown as AddCase<OperatorCaseContext>);
}
