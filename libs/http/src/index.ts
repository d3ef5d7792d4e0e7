export { createHttpApp, SHUTTING_DOWN, type HttpAppOptions, type ReadinessCheck } from './app.js';
export { jsonBody, MAX_BODY_BYTES } from './body.js';
export { publicCors } from './cors.js';
export { createLogger, type Logger } from './logger.js';
export { REQUEST_ID_HEADER, requestId } from './request-id.js';
export { startServer, type RunningServer, type ServerOptions } from './server.js';
export { formatPath, parseOrThrow } from './validate.js';
export { buildOpenApi, errorSchemas, type ApiOperation } from './openapi.js';
