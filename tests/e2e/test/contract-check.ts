// The contract check (@herald/testing): every answer an end-to-end test receives through the
// ingress, by `fetch` or by the node:http helpers, is checked against the OpenAPI document, and a
// violation fails the test that received it.
import { afterEach } from '@jest/globals';
import { checkAnswersFrom, contractCheckedFetch, takeContractViolations } from '@herald/testing';
import { INGRESS } from './support.js';

checkAnswersFrom(INGRESS);
globalThis.fetch = contractCheckedFetch(globalThis.fetch);

afterEach(() => {
  const violations = takeContractViolations();
  if (violations) throw violations;
});
