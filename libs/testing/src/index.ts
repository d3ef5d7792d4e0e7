export {
  prepareTestDatabase,
  testDatabaseUrl,
  TEST_POSTGRES_URL,
  type PrepareTestDatabaseOptions,
} from './database.js';
export {
  basicAuthorization,
  createTestSigner,
  createTestRequester,
  createTestTenants,
  createTestVerifier,
  signTestAccessToken,
  TEST_AUDIENCE,
  TEST_ISSUER,
  type RequestOptions,
  type TestTenants,
  type TestTokenSigner,
  type TokenOptions,
} from './tokens.js';
export {
  DUMP_SEARCH_TIMEOUT_MS,
  findPgDump,
  heraldDatabases,
  searchHeraldDatabaseDumps,
  type DumpSearch,
} from './pg-dump.js';
export {
  consumeUntil,
  ensureTestTopics,
  markTopicEnd,
  setGroupOffsetsToEnd,
  TEST_KAFKA_BROKERS,
  testKafka,
  watchTenant,
  watchTopics,
  type Published,
  type TenantWatch,
  type TopicMessage,
  type TopicWatch,
  type WatchOptions,
} from './kafka.js';
export { freeLoopbackPort, startStandInServer, type StandInServer } from './http.js';
export { pollUntil, type PollOptions } from './waiting.js';
export { STACK_DATA_DIR, stackAdminToken, TEST_REDIS_URL } from './local-stack.js';
export { API_TIMESTAMP, uniqueEmail, UUID_PATTERN } from './values.js';
export { sqlStatements } from './sql.js';
export { sqlFunctionsOf, sqlFunctionsOfFile, type SqlFunction } from './sql-functions.js';
export {
  checkAnswer,
  checkAnswersFrom,
  contractCheckedFetch,
  contractViolations,
  takeContractViolations,
  type ReceivedAnswer,
} from './contract.js';
