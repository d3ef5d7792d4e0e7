// `node --test tools/generate/src/api-reference.test.mjs`: docs/api-reference.md from the OpenAPI
// document: every operation gets its section, and the committed file is the current rendering.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import { MARKER, file, openapiFile, renderApiReference, target } from './api-reference.mjs';
import { slug } from './markdown.mjs';

const doc = JSON.parse(fs.readFileSync(openapiFile, 'utf8'));

test('when rendered, then every operation has a section with its statuses', () => {
  const text = renderApiReference(doc, `# Reference\n\n${MARKER}\n`);
  for (const [route, item] of Object.entries(doc.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      const heading = `### \`${method.toUpperCase()} ${route}\``;
      const at = text.indexOf(`${heading}\n`);
      assert.notEqual(at, -1, `no section ${heading}`);
      assert.ok(text.includes(`(#${slug(`${method} ${route}`)})`), `no link to ${heading}`);
      const section = text.slice(at, text.indexOf('\n### ', at + 1) >>> 0);
      for (const status of Object.keys(operation.responses)) {
        assert.match(section, new RegExp(`^\\| ${status} `, 'm'), `${heading}: no ${status}`);
      }
    }
  }
});

test('when the template has no marker line, then rendering fails', () => {
  assert.throws(() => renderApiReference(doc, '# Reference\n'), /<!-- routes -->/);
});

test('when compared with a fresh rendering, then docs/api-reference.md is up to date', () => {
  assert.equal(
    fs.readFileSync(file, 'utf8'),
    target.render(),
    'run `node tools/generate/src/api-reference.mjs`',
  );
});
