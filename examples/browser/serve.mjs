// A tiny static server for this example (Node.js built-ins only): the page from this folder,
// and the SDK's browser build (the ES modules in @herald/client's dist/) under /herald-client/.
// Nothing else is served.
//
//   node examples/browser/serve.mjs      # PORT=5173 by default, on 127.0.0.1
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
// Wherever @herald/client is installed: this repository's libs/client, or node_modules.
const sdk = path.dirname(fileURLToPath(import.meta.resolve('@herald/client')));
if (!fs.existsSync(path.join(sdk, 'index.js'))) {
  console.error(`no SDK build in ${sdk}: run npm run build -w @herald/client`);
  process.exit(1);
}

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.map': 'application/json',
  '.css': 'text/css; charset=utf-8',
};

/** The file a URL path names inside `root`, or null (no escaping the folder with `..`). */
function inside(root, urlPath) {
  const file = path.resolve(root, `.${path.posix.normalize(`/${urlPath}`)}`);
  return file.startsWith(root + path.sep) ? file : null;
}

const server = http.createServer((req, res) => {
  const { pathname } = new URL(req.url, 'http://localhost');
  let file = null;
  if (pathname.startsWith('/herald-client/')) {
    file = inside(sdk, decodeURIComponent(pathname.slice('/herald-client/'.length)));
  } else if (['/index.html', '/app.js', '/'].includes(pathname)) {
    file = path.join(here, pathname === '/' ? 'index.html' : pathname.slice(1));
  }
  const type = file && TYPES[path.extname(file)];
  if (req.method !== 'GET' || !type || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
    return;
  }
  res.writeHead(200, { 'content-type': type, 'cache-control': 'no-store' });
  fs.createReadStream(file).pipe(res);
});

server.listen(Number(process.env.PORT ?? 5173), '127.0.0.1', () => {
  console.log(`serving http://127.0.0.1:${server.address().port}/`);
});
for (const signal of ['SIGINT', 'SIGTERM'])
  process.on(signal, () => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
  });
