import { describe, expect, it } from '@jest/globals';
import { assignShards, type RelayMember } from '../../src/index.js';

const relay = (relayId: string, shardCount = 32): RelayMember => ({ relayId, shardCount });

describe('sharing the outbox shards between relays', () => {
  it('when a relay is alone, then it publishes every shard', () => {
    expect(assignShards([], relay('a')).shards).toEqual(Array.from({ length: 32 }, (_, i) => i));
  });

  it('when relays see the same members, then each shard goes to exactly one of them, evenly within one', () => {
    for (const count of [2, 3, 5, 7]) {
      const members = Array.from({ length: count }, (_, i) => relay(`relay-${i}`));
      const shares = members.map((me) => assignShards(members, me).shards);
      expect(shares.flat().sort((x, y) => x - y)).toEqual(Array.from({ length: 32 }, (_, i) => i));
      const sizes = shares.map((s) => s.length);
      expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(1);
    }
  });

  it('when a relay is not yet among the members it read, then it counts itself in', () => {
    const others = [relay('b')];
    const a = assignShards(others, relay('a')).shards;
    const b = assignShards([relay('a')], relay('b')).shards;
    expect(a).toHaveLength(16);
    expect([...a, ...b].sort((x, y) => x - y)).toEqual(Array.from({ length: 32 }, (_, i) => i));
  });

  it('when there are more relays than shards, then the last ones publish nothing', () => {
    const members = ['a', 'b', 'c'].map((id) => relay(id, 2));
    expect(members.map((me) => assignShards(members, me).shards)).toEqual([[0], [1], []]);
  });

  it('when a live relay counts the shards differently, then this relay publishes nothing and names it', () => {
    const result = assignShards([relay('b', 16), relay('c', 32)], relay('a', 32));
    expect(result).toEqual({ shards: [], disagreeing: ['b'] });
  });
});
