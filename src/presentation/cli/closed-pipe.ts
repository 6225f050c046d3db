/**
 * `agents … | head`: the reader closing the pipe is its choice, not a failure of the command. Node
 * ignores SIGPIPE, so a write to a closed pipe fails with EPIPE on the stream, and without a
 * listener that 'error' event ends the process with exit 1 and a stack trace. Imports nothing, so
 * that `agents --version` (answered before the commands load) can use it too.
 */

/** Makes EPIPE on stdout and stderr quiet: what is still written goes nowhere, the exit code is the command's. */
export function quietOnClosedPipes(streams: readonly NodeJS.WritableStream[] = [process.stdout, process.stderr]): void {
  for (const s of streams) {
    // Once per stream, whichever entry (help, version, commands) runs first.
    if (guarded.has(s)) continue;
    guarded.add(s);
    s.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE') throw err;
    });
  }
}

const guarded = new WeakSet<NodeJS.WritableStream>();
