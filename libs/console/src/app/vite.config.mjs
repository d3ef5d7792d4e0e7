// The console's build: one page, its scripts and styles under assets/ with hashed names,
// served by the auth service at /console (libs/console/src/server).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = path.dirname(fileURLToPath(import.meta.url));

export default defineConfig({
  root: here,
  // relative: the page is served at <prefix>/console/, whatever the prefix in front of it
  base: './',
  logLevel: 'info',
  build: {
    outDir: path.join(here, '..', '..', 'dist', 'app'),
    emptyOutDir: true,
    // The page's Content-Security-Policy allows no inline code: no preload polyfill, every
    // style in a file of its own, nothing inlined as a data: URL.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    cssCodeSplit: false,
    sourcemap: false,
    reportCompressedSize: true,
  },
});
