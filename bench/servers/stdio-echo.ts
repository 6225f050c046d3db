/**
 * The stdio floor: a child process speaking newline-delimited JSON-RPC that answers every request
 * with a canned task-sized result — read a line, parse it, serialise the reply. The first line
 * (`{"method":"set","params":{...}}`) gives it the result to answer with.
 */
let reply: unknown = null;
let rest = '';
process.stdin.on('data', (c: Buffer) => {
  const text = rest + c.toString('utf8');
  let start = 0;
  let out = '';
  for (let nl = text.indexOf('\n', start); nl !== -1; nl = text.indexOf('\n', start)) {
    const msg = JSON.parse(text.slice(start, nl)) as { id?: unknown; method?: string; params?: unknown };
    start = nl + 1;
    if (msg.method === 'set') {
      reply = msg.params;
      continue;
    }
    out += `${JSON.stringify({ jsonrpc: '2.0', id: msg.id, result: reply })}\n`;
  }
  rest = text.slice(start);
  if (out) process.stdout.write(out);
});
process.stdin.on('end', () => process.exit(0));
