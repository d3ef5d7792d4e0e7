import { commandsOf, forwardFlags, groups, nameOf } from './args.js';
import { commands, type Command } from './commands.js';
import { DEFAULT_URL } from './settings.js';

/** `keys create --tenant <id> [--kind secret|publishable] [--scopes <a,b>] [--name <name>]` */
export function synopsis(command: Command): string {
  const flags = Object.entries(command.flags).map(([name, flag]) => {
    const text = `--${name} ${flag.choices ? flag.choices.join('|') : flag.value}`;
    return flag.required ? text : `[${text}]`;
  });
  return [nameOf(command), ...flags].join(' ');
}

function details(command: Command): string {
  const width = Math.max(
    ...Object.entries(command.flags).map(([n, f]) => n.length + f.value.length),
  );
  const flags = Object.entries(command.flags).map(([name, flag]) => {
    const notes = [
      flag.choices && `one of ${flag.choices.join(', ')}`,
      flag.required && 'required',
      flag.default !== undefined && `default: ${flag.default}`,
    ].filter(Boolean);
    const label = `--${name} ${flag.value}`.padEnd(width + 5);
    return `      ${label}${flag.help}${notes.length ? ` (${notes.join('; ')})` : ''}`;
  });
  return [
    `  ${synopsis(command)}`,
    `      ${command.method} ${command.path}`,
    `      ${command.summary}`,
    ...flags,
    `      e.g. ${command.example}`,
  ].join('\n');
}

export const forwardSynopsis = `forward ${Object.entries(forwardFlags)
  .map(([name, flag]) => `[--${name} ${flag.value}]`)
  .join(' ')}`;

const forwardHelp = `Reaching an installation whose operator API is not exposed
  ${forwardSynopsis}
      Serves every operator route of a Helm release on http://127.0.0.1:<port>, through one
      kubectl port-forward per Service (auth, contacts, events, billing), until Ctrl-C; point
      HERALD_URL at it from another shell. Uses kubectl (KUBECTL, else from PATH) with its
      KUBECONFIG. A port-forward that ends (its pod went away) is opened again.
${Object.entries(forwardFlags)
  .map(([name, flag]) => {
    const fallback = 'default' in flag ? ` (default: ${flag.default})` : '';
    return `      ${`--${name} ${flag.value}`.padEnd(26)}${flag.help}${fallback}`;
  })
  .join('\n')}
      e.g. herald-admin forward --namespace herald --release herald`;

const common = `Options for every command
  --get <field>   print only this field of the answer, raw (a dotted path works: eventNames.0.name)
  --json          compact one-line JSON instead of pretty JSON
  -h, --help      this help; "herald-admin <group> --help" for one group

Environment
  HERALD_URL       the ingress address (default ${DEFAULT_URL})
  ADMIN_TOKEN      the operator token (default: the local stack's .herald/admin-token)
  HERALD_DATA_DIR  the local stack's data folder (default .herald, relative to the repository)
  KUBECTL          the kubectl forward runs (default: kubectl from the PATH)

Output
  The answer body as pretty JSON on stdout; an answer without a body (204) prints nothing.

Exit codes
  0  done
  1  the API answered an error (printed as "error: <code>: <message> (HTTP <status>)"),
     could not be reached, no admin token was found, or --get named a missing field
  2  the command line is wrong (unknown command or option, missing required option);
     nothing was sent`;

/** The whole help, or one group's, or one command's, or forward's. */
export function helpText(
  topic: { group?: string; command?: Command; forward?: boolean } = {},
): string {
  if (topic.forward) return `Usage\n  herald-admin ${forwardSynopsis}\n\n${forwardHelp}\n`;
  const shown = topic.command
    ? [topic.command]
    : topic.group !== undefined
      ? commandsOf(topic.group)
      : commands;
  const intro =
    topic.command || topic.group !== undefined
      ? ''
      : `herald-admin: Herald's operator CLI, over the /admin/v1 API.\n\n`;
  return `${intro}Usage
  npm run -s admin -- <command> [options]      (from the repository)
  herald-admin <command> [options]

Commands${topic.command || topic.group !== undefined ? '' : ` (groups: ${groups.join(', ')})`}
${shown.map(details).join('\n\n')}
${topic.command || topic.group !== undefined ? '' : `\n${forwardHelp}\n`}
${common}
`;
}
