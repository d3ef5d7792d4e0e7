// Server-Sent Events, as `events live` receives them: blocks separated by a blank line, each of
// `field: value` lines; comment lines (":") carry nothing.

export interface SseMessage {
  readonly event: string;
  readonly data: string;
  readonly id?: string;
}

/** A reader of text chunks (split anywhere) that calls `onMessage` for each whole message. */
export function sseReader(onMessage: (message: SseMessage) => void): (chunk: string) => void {
  let buffer = '';
  // A chunk may end between the CR and LF of one line end: the CR waits for the next chunk.
  let carriage = '';
  return (chunk) => {
    let text = carriage + chunk;
    carriage = text.endsWith('\r') ? '\r' : '';
    if (carriage) text = text.slice(0, -1);
    buffer += text.replace(/\r\n?/g, '\n');
    let end;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let event = 'message';
      let id: string | undefined;
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line === '' || line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'event') event = value;
        else if (field === 'data') data.push(value);
        else if (field === 'id') id = value;
      }
      if (data.length > 0) onMessage({ event, data: data.join('\n'), ...(id ? { id } : {}) });
    }
  };
}
