import { describe, expect, it } from '@jest/globals';
import { sqlStatements } from '../../src/index.js';

describe('sqlStatements', () => {
  it('when two DDL texts differ only in comments and layout, then their statements are equal', () => {
    const commented = `-- a table
create table t (
  id int primary key,   -- the key
  v text
);
create index t_v on t (v);
`;
    expect(sqlStatements(commented)).toEqual([
      'create table t (id int primary key, v text)',
      'create index t_v on t (v)',
    ]);
    expect(
      sqlStatements('create table t (id int primary key,v text);create index t_v on t (v)'),
    ).toEqual(sqlStatements(commented));
    expect(sqlStatements('create table t (id bigint primary key, v text)')).not.toEqual(
      sqlStatements(commented),
    );
  });
});
