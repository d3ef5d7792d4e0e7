import { describe, expect, it } from '@jest/globals';
import { sseReader, type SseMessage } from '../src/sse.js';

describe('sseReader', () => {
  it('when messages arrive split anywhere, with comments and CRLF, then each whole message is read once', () => {
    const messages: SseMessage[] = [];
    const read = sseReader((m) => messages.push(m));
    const text =
      'retry: 3000\n: a comment\n\nevent: recorded\r\nid: e1\r\ndata: {"a":1}\r\n\r\n: idle\n\nevent: skipped\ndata: {"count":2}\n\n';
    for (const piece of text.match(/.{1,7}/gs) ?? []) read(piece);
    expect(messages).toEqual([
      { event: 'recorded', id: 'e1', data: '{"a":1}' },
      { event: 'skipped', data: '{"count":2}' },
    ]);
  });

  it('when a message has several data lines, then they are joined by line breaks', () => {
    const messages: SseMessage[] = [];
    sseReader((m) => messages.push(m))('data: one\ndata: two\n\n');
    expect(messages).toEqual([{ event: 'message', data: 'one\ntwo' }]);
  });
});
