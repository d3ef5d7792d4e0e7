// YAML to JSON without a YAML library: helm itself parses it. A throwaway chart in a temporary
// folder gets the YAML as a file (or as its values.yaml) and one template that prints it with
// toJson; this is how the check reads rendered manifests, the chart's defaults and the compose file.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

function renderJson(helm, { valuesYaml = '', files = {}, template }) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-helm-json-'));
  try {
    fs.mkdirSync(path.join(dir, 'templates'));
    fs.mkdirSync(path.join(dir, 'files'));
    fs.writeFileSync(path.join(dir, 'Chart.yaml'), 'apiVersion: v2\nname: json\nversion: 0.0.0\n');
    fs.writeFileSync(path.join(dir, 'values.yaml'), valuesYaml);
    for (const [name, content] of Object.entries(files)) {
      fs.writeFileSync(path.join(dir, 'files', name), content);
    }
    fs.writeFileSync(path.join(dir, 'templates', 'out.yaml'), template);
    const result = spawnSync(helm, ['template', 'json', dir], {
      encoding: 'utf8',
      maxBuffer: 256 * 1024 * 1024,
    });
    if (result.status !== 0) throw new Error(`helm could not parse the YAML:\n${result.stderr}`);
    // helm prints `---`, a `# Source:` comment, then the template's output
    const json = result.stdout.slice(
      result.stdout.indexOf('\n', result.stdout.indexOf('# Source:')),
    );
    return JSON.parse(json);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** The documents of a multi-document YAML stream (as `helm template` prints), as objects. */
export function yamlDocuments(helm, yaml) {
  const docs = renderJson(helm, {
    files: { 'in.yaml': yaml },
    template: `{{- $docs := list }}
{{- range regexSplit "(?m)^---[ \\t]*$" (.Files.Get "files/in.yaml") -1 }}
{{- $doc := fromYaml . }}
{{- if hasKey $doc "Error" }}{{ fail (printf "not YAML: %s" $doc.Error) }}{{ end }}
{{- if $doc }}{{ $docs = append $docs $doc }}{{ end }}
{{- end }}
{{- toJson (dict "documents" $docs) }}
`,
  });
  // an object, not a bare array: helm reads every template's output as a YAML mapping
  return docs.documents;
}

/** One YAML document (a values file, the compose file), as an object; anchors and merges resolved. */
export function yamlDocument(helm, yaml) {
  return renderJson(helm, { valuesYaml: yaml, template: '{{- toJson .Values }}\n' });
}
