// `node --test`: how the relay fault finds the relay process behind a PostgreSQL session, from
// the session's client port and the kernel's table of TCP connections.
import assert from 'node:assert/strict';
import test from 'node:test';
import { connectionInodes } from './relays.mjs';

// /proc/net/tcp: the relay's end (local port 0xDB0C = 56076 to PostgreSQL's 0xD888 = 55432),
// PostgreSQL's end of the same connection, a listening socket, and another connection.
const table = [
  '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode',
  '   0: 0100007F:D888 00000000:0000 0A 00000000:00000000 00:00000000 00000000   105        0 1111 1 0000000000000000 100 0 0 10 0',
  '   1: 0100007F:DB0C 0100007F:D888 01 00000000:00000000 00:00000000 00000000     0        0 2222 1 0000000000000000 20 4 30 10 -1',
  '   2: 0100007F:D888 0100007F:DB0C 01 00000000:00000000 00:00000000 00000000   105        0 3333 1 0000000000000000 20 4 30 10 -1',
  '   3: 0100007F:DB0D 0100007F:D888 01 00000000:00000000 00:00000000 00000000     0        0 4444 1 0000000000000000 20 4 30 10 -1',
  '   4: 0100007F:DB0C 0100007F:1F90 06 00000000:00000000 03:00000000 00000000     0        0 0 3 0000000000000000',
  '',
].join('\n');

test('when a client port is given, then only the socket of that end of the connection is named', () => {
  assert.deepEqual([...connectionInodes(table, 56076, 55432)], ['2222']);
});

test('when no connection leaves from the port, then no socket is named', () => {
  assert.deepEqual([...connectionInodes(table, 56000, 55432)], []);
  // The other direction (PostgreSQL's end) is not the client's.
  assert.deepEqual([...connectionInodes(table, 55432, 56076)], ['3333']);
  assert.deepEqual([...connectionInodes(table, 55432, 56077)], []);
});

test('when the table is IPv6, then its ports are read the same way', () => {
  const v6 = [
    '  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode',
    '   0: 00000000000000000000000001000000:DB0C 00000000000000000000000001000000:D888 01 00000000:00000000 00:00000000 00000000     0        0 5555 1 0000000000000000 20 4 30 10 -1',
  ].join('\n');
  assert.deepEqual([...connectionInodes(v6, 56076, 55432)], ['5555']);
});
