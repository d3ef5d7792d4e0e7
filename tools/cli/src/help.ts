import { commandsOf, groups, nameOf } from './args.js';
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

const common = `Options for every command
  --get <field>   print only this field of the answer, raw (a dotted path works: eventNames.0.name)
  --json          compact one-line JSON instead of pretty JSON
  -h, --help      this help; "herald-admin <group> --help" for one group

Environment
  HERALD_URL       the ingress address (default ${DEFAULT_URL})
  ADMIN_TOKEN      the operator token (default: the local stack's .herald/admin-token)
  HERALD_DATA_DIR  the local stack's data folder (default .herald, relative to the repository)

Output
  The answer body as pretty JSON on stdout; an answer without a body (204) prints nothing.

Exit codes
  0  done
  1  the API answered an error (printed as "error: <code>: <message> (HTTP <status>)"),
     could not be reached, no admin token was found, or --get named a missing field
  2  the command line is wrong (unknown command or option, missing required option);
     nothing was sent`;

/** The whole help, or one group's, or one command's. */
export function helpText(topic: { group?: string; command?: Command } = {}): string {
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

${common}
`;
}
