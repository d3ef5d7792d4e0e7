// Answers the local stack gave, for the OpenAPI document's examples (libs/api-reference checks
// each against its schema): one Tenant's subscription, read, after its third failed payment in a
// row, and after its payment details were updated.

export const subscriptionExample = { state: 'active', consecutiveFailures: 0 };

export const suspendedExample = { state: 'suspended', consecutiveFailures: 3 };

export const reactivatedExample = { state: 'active', consecutiveFailures: 0 };
