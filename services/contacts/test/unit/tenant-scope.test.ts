// Every statement on a Tenant's Contacts names the Tenant, even where an id found earlier in the
// same transaction already belongs to it: a later edit that loses the earlier lookup must not
// leave a statement that reaches another Tenant's row. This reads the SQL the service runs (the
// data modules and the functions of the migrations) and lists the statements that do not.
import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const TENANT_TABLES = ['contacts', 'contact_tombstones', 'organizations'];
const ROOT = new URL('../..', import.meta.url).pathname;

/** The statements of a SQL text (a migration or a function body), DDL left out. */
function sqlStatements(text: string): string[] {
  return text
    .replace(/--[^\n]*/g, '')
    .split(';')
    .map((s) => s.replace(/\s+/g, ' ').trim())
    .filter((s) => s !== '' && !/^(create|alter|drop|comment|grant|revoke)\b/i.test(s))
    .map((s) => s.replace(/^.*?\$\$\s*(declare\b.*?\bbegin\b\s*)?/i, ''));
}

/** The SQL literals of a TypeScript module: strings that begin with a DML keyword. */
function moduleStatements(text: string): string[] {
  const literals = text.match(/`[^`]*`|'(?:[^'\\\n]|\\.)*'/g) ?? [];
  return literals
    .map((l) => l.slice(1, -1).replace(/\s+/g, ' ').trim())
    .filter((s) => /^(select|insert|update|delete|with)\b/i.test(s));
}

/** The statements touching a Tenant table without naming the Tenant. */
function unscoped(statements: readonly string[]): string[] {
  const touches = new RegExp(`\\b(from|update|into|join)\\s+(${TENANT_TABLES.join('|')})\\b`, 'i');
  return statements.filter((s) => touches.test(s) && !/\b(tenant_id|p_tenant)\b/i.test(s));
}

describe('unscoped', () => {
  it('when a statement reaches a Contact by id alone, then it is listed', () => {
    expect(
      unscoped(sqlStatements('update contacts c set name = p_name where c.id = target.id;')),
    ).toHaveLength(1);
    expect(
      unscoped(moduleStatements("db.query('delete from contacts where id = $1', [id])")),
    ).toHaveLength(1);
  });

  it('when it names the Tenant, then it is not', () => {
    expect(
      unscoped(
        sqlStatements(
          'update contacts c set name = p_name where c.tenant_id = p_tenant and c.id = target.id;',
        ),
      ),
    ).toEqual([]);
  });
});

describe('the SQL of the contacts service', () => {
  const migrations = readdirSync(join(ROOT, 'migrations')).filter((f) => f.endsWith('.sql'));
  const modules = readdirSync(join(ROOT, 'src/data')).filter((f) => f.endsWith('.ts'));

  it('finds statements to check in the migrations and in the data modules', () => {
    const all = [
      ...migrations.flatMap((f) =>
        sqlStatements(readFileSync(join(ROOT, 'migrations', f), 'utf8')),
      ),
      ...modules.flatMap((f) => moduleStatements(readFileSync(join(ROOT, 'src/data', f), 'utf8'))),
    ];
    expect(all.filter((s) => /\bupdate contacts\b/i.test(s)).length).toBeGreaterThan(0);
    expect(all.filter((s) => /\bdelete from contacts\b/i.test(s)).length).toBeGreaterThan(0);
  });

  it.each(migrations)('every statement of %s on a Tenant table names the Tenant', (file) => {
    expect(unscoped(sqlStatements(readFileSync(join(ROOT, 'migrations', file), 'utf8')))).toEqual(
      [],
    );
  });

  it.each(modules)('every statement of src/data/%s on a Tenant table names the Tenant', (file) => {
    expect(unscoped(moduleStatements(readFileSync(join(ROOT, 'src/data', file), 'utf8')))).toEqual(
      [],
    );
  });
});
