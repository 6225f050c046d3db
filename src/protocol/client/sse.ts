/** A minimal Server-Sent Events reader for fetch bodies: yields each event's id and data. */
export async function* readSse(body: ReadableStream<Uint8Array>): AsyncIterable<{ id?: string; data: string }> {
  const decoder = new TextDecoder();
  let buffer = '';
  let data: string[] = [];
  let id: string | undefined;
  const reader = body.getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let nl: number;
      while ((nl = buffer.indexOf('\n')) !== -1) {
        const line = buffer.slice(0, nl).replace(/\r$/, '');
        buffer = buffer.slice(nl + 1);
        if (line === '') {
          if (data.length > 0) {
            const ev: { id?: string; data: string } = { data: data.join('\n') };
            if (id !== undefined) ev.id = id;
            yield ev;
          }
          data = [];
          id = undefined;
        } else if (line.startsWith(':')) {
          continue;
        } else {
          const colon = line.indexOf(':');
          const field = colon === -1 ? line : line.slice(0, colon);
          const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
          if (field === 'data') data.push(value);
          else if (field === 'id') id = value;
        }
      }
    }
  } finally {
    // Leaving early (or failing) cancels the body, which closes the HTTP request.
    await reader.cancel().catch(() => {});
    reader.releaseLock();
  }
}
