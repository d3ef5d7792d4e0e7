export {
  prepareTestDatabase,
  TEST_POSTGRES_URL,
  type PrepareTestDatabaseOptions,
} from './database.js';
export {
  createTestSigner,
  createTestRequester,
  createTestVerifier,
  signTestAccessToken,
  TEST_AUDIENCE,
  TEST_ISSUER,
  type RequestOptions,
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
  markTopicEnd,
  setGroupOffsetsToEnd,
  TEST_KAFKA_BROKERS,
  watchTenant,
  type Published,
  type TenantWatch,
  type WatchOptions,
} from './kafka.js';
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
