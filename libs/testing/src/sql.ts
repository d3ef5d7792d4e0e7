/**
 * The statements of a SQL text, each on one line: comments dropped, whitespace collapsed, no
 * space inside parentheses or before a comma, no trailing semicolon. Two DDL texts that differ
 * only in layout and comments then compare equal.
 */
export function sqlStatements(sql: string): string[] {
  return sql
    .replace(/--[^\n]*/g, '')
    .split(';')
    .map((statement) =>
      statement
        .replace(/\s+/g, ' ')
        .replace(/\(\s+/g, '(')
        .replace(/\s+\)/g, ')')
        .replace(/\s*,\s*/g, ', ')
        .trim(),
    )
    .filter((statement) => statement.length > 0);
}
