/** A raw `agents serve --stdio` child: lines in, parsed lines out (for hostile input and the fuzzer). */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { BIN } from './harness.ts';

export class RawStdioAgent {
  readonly child: ChildProcessWithoutNullStreams;
  /** Every line the agent wrote, parsed (a line that is not JSON is kept as `{ unparsable: line }`). */
  readonly lines: any[] = [];
  /** Every line the agent wrote, as written. */
  readonly rawLines: string[] = [];
  readonly stderr: string[] = [];
  private waiters: Array<() => void> = [];
  private buf = '';
  readonly exited: Promise<number | null>;

  constructor(dataDir: string, args: string[] = [], env: NodeJS.ProcessEnv = process.env) {
    this.child = spawn(process.execPath, [BIN, 'serve', '--stdio', '--data-dir', dataDir, ...args], { env });
    this.exited = new Promise((resolve) => this.child.on('exit', (code) => resolve(code)));
    this.child.stdin.on('error', () => {});
    this.child.stderr.on('data', (c: Buffer) => this.stderr.push(c.toString('utf8')));
    this.child.stdout.on('data', (c: Buffer) => {
      this.buf += c.toString('utf8');
      let nl: number;
      while ((nl = this.buf.indexOf('\n')) !== -1) {
        const line = this.buf.slice(0, nl);
        this.buf = this.buf.slice(nl + 1);
        this.rawLines.push(line);
        try {
          this.lines.push(JSON.parse(line));
        } catch {
          this.lines.push({ unparsable: line });
        }
        for (const w of this.waiters.splice(0)) w();
      }
    });
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  send(line: string | Buffer): void {
    this.child.stdin.write(line);
    this.child.stdin.write('\n');
  }

  async initialize(): Promise<void> {
    this.send(JSON.stringify({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: { protocolVersion: '1.0' } }));
    await this.waitFor((m) => m.id === 'init');
  }

  /** Sends one request and waits for its final response (not stream notifications). */
  async call(id: string, method: string, params: unknown): Promise<any> {
    this.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    return this.waitFor((m) => m.id === id && ('result' in m || 'error' in m));
  }

  async waitFor(pred: (m: any) => boolean, ms = 10_000): Promise<any> {
    const end = Date.now() + ms;
    for (;;) {
      const hit = this.lines.find(pred);
      if (hit) return hit;
      if (!this.alive)
        throw new Error(
          `the agent exited (${this.child.exitCode ?? this.child.signalCode}):\n${this.stderr.join('').slice(-2000)}`,
        );
      if (Date.now() > end)
        throw new Error(`no matching message; last lines ${JSON.stringify(this.lines.slice(-5)).slice(0, 1000)}`);
      await new Promise<void>((r) => {
        this.waiters.push(r);
        setTimeout(r, 50).unref();
      });
    }
  }

  async stop(): Promise<void> {
    if (!this.alive) return;
    this.child.stdin.end();
    const t = setTimeout(() => this.child.kill('SIGKILL'), 5000);
    await this.exited;
    clearTimeout(t);
  }
}
