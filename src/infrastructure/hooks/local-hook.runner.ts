/**
 * Runs hooks on this machine: a command confined like every command an actor or a plan runs
 * (tools/confinement.ts: the allowlisted environment only, no network unless allowed, writes only
 * in its work directory), the event JSON on its stdin; a webhook as one POST of the event JSON
 * through the egress guard, like a push webhook (no loopback or private addresses unless
 * allowlisted, checked before the request and again when it connects; no redirects followed). A
 * hook's own failure is an outcome (`failure`), never a throw.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HookInvocation, HookOutcome, HookRunner } from '../../application/index.ts';
import { egressRefusalOf, type EgressGuard } from '../net/egress-guard.ts';
import type { ConfinementSource } from '../tools/confinement.ts';
import { runConfined } from '../tools/process-runner.ts';
import { messageOf } from '../../domain/errors.ts';

/** What a webhook may answer before the rest is ignored (bytes). */
const MAX_WEBHOOK_BODY = 64 * 1024;

export interface LocalHookRunnerOptions {
  confinement: ConfinementSource;
  /** Checks a webhook's URL (throws when it may not be reached) and sends it through the guard. */
  egress: Pick<EgressGuard, 'check' | 'fetch'>;
  /** Where a command without a work directory of its own gets an empty one (default: the OS tmpdir). */
  scratchRoot?: string | undefined;
}

export class LocalHookRunner implements HookRunner {
  private readonly opts: LocalHookRunnerOptions;

  constructor(opts: LocalHookRunnerOptions) {
    this.opts = opts;
  }

  run(inv: HookInvocation): Promise<HookOutcome> {
    return inv.hook.command ? this.command(inv, inv.hook.command) : this.webhook(inv);
  }

  private async command(
    inv: HookInvocation,
    cmd: NonNullable<HookInvocation['hook']['command']>,
  ): Promise<HookOutcome> {
    let scratch: string | undefined;
    try {
      const dir =
        inv.workdir ?? (scratch = await mkdtemp(join(this.opts.scratchRoot ?? tmpdir(), 'cleveragents-hook-')));
      const r = await runConfined(
        await this.opts.confinement,
        {
          program: cmd.program,
          args: cmd.args ?? [],
          cwd: dir,
          sandboxRoot: dir,
          network: inv.network,
          env: cmd.env,
        },
        { timeoutMs: inv.timeoutMs, signal: inv.signal, input: inv.payload, captureStdout: true },
      );
      const base = { answer: r.stdout ?? r.output, output: r.output };
      const seconds = inv.timeoutMs / 1000;
      if (r.spawnError !== undefined) return { ...base, failure: `it could not be started: ${r.spawnError}` };
      if (r.timedOut) return { ...base, failure: `it timed out after ${seconds} s` };
      if (r.aborted) return { ...base, failure: 'it was cancelled' };
      if (r.outputLimited) return { ...base, failure: 'it was stopped: it wrote more output than a command may' };
      if (r.exitCode === null)
        return { ...base, exitCode: null, failure: `it was killed${r.signal ? ` by ${r.signal}` : ''}` };
      return { ...base, exitCode: r.exitCode };
    } catch (err) {
      return { answer: '', output: '', failure: `it could not be run: ${messageOf(err)}` };
    } finally {
      if (scratch) await rm(scratch, { recursive: true, force: true }).catch(() => {});
    }
  }

  private async webhook(inv: HookInvocation): Promise<HookOutcome> {
    const hook = inv.hook.webhook;
    if (!hook) return { answer: '', output: '', failure: 'it names neither a command nor a webhook' };
    let target: URL;
    try {
      // A namespace that holds private-network (local mode: the user's own) may reach internal addresses.
      target = inv.privateNetwork ? new URL(hook.url) : await this.opts.egress.check(hook.url);
    } catch (err) {
      return { answer: '', output: '', failure: `its URL is refused: ${messageOf(err)}` };
    }
    const timeout = AbortSignal.timeout(inv.timeoutMs);
    const signal = AbortSignal.any([inv.signal, timeout]);
    try {
      const res = await (inv.privateNetwork ? fetch : this.opts.egress.fetch)(target, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...hook.headers },
        body: inv.payload,
        signal,
        redirect: 'manual',
      });
      const body = await cappedText(res, MAX_WEBHOOK_BODY);
      if (res.status >= 300 && res.status < 400)
        return {
          answer: body,
          output: body,
          status: res.status,
          failure: `it redirected (HTTP ${res.status}), and redirects are not followed`,
        };
      return { answer: body, output: body, status: res.status };
    } catch (err) {
      if (timeout.aborted) return { answer: '', output: '', failure: `it timed out after ${inv.timeoutMs / 1000} s` };
      if (inv.signal.aborted) return { answer: '', output: '', failure: 'it was cancelled' };
      const refusal = egressRefusalOf(err);
      if (refusal) return { answer: '', output: '', failure: `its URL is refused: ${refusal.message}` };
      const cause = (err as { cause?: { message?: string } }).cause?.message;
      return {
        answer: '',
        output: '',
        failure: `${target.origin} could not be reached: ${cause ?? messageOf(err)}`,
      };
    }
  }
}

/** The first `max` bytes of a response body as text (the rest is not read). */
async function cappedText(res: Response, max: number): Promise<string> {
  if (!res.body) return '';
  const reader: ReadableStreamDefaultReader<Uint8Array> = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < max) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.length;
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
  return Buffer.concat(chunks).subarray(0, max).toString('utf8');
}
