// The contract check (@herald/testing), as in the end-to-end suite: every answer a test receives
// from the stack, through the ingress or a proxy in front of it (test/proxy.ts), is checked
// against the OpenAPI document, and a violation fails the test that received it. The unit tests'
// scripted fetch is not the global one, and is not checked.
import { afterEach } from '@jest/globals';
import { checkAnswersFrom, contractCheckedFetch, takeContractViolations } from '@herald/testing';
import { INGRESS } from './support.js';

checkAnswersFrom(INGRESS);
globalThis.fetch = contractCheckedFetch(globalThis.fetch);

afterEach(() => {
  const violations = takeContractViolations();
  if (violations) throw violations;
});
