import type { Command } from 'commander';
import type { GlobalFlags } from '../config.js';
import { intOption } from './options.js';

/** What `agents serve` asks the composition root to run. */
export interface ServeOptions {
  stdio: boolean;
  host: string;
  port: number;
  token?: string;
  dataDir?: string;
  defaultActor?: string;
  verbose: boolean;
  maxBodyBytes?: number;
}

interface ServeFlags extends GlobalFlags {
  stdio?: boolean;
  host: string;
  port: number;
  defaultActor?: string;
  maxBodyBytes?: number;
}

/** `agents serve` only parses its flags: serving is the composition root's job. */
export function registerServe(program: Command, serve: (opts: ServeOptions) => Promise<number>, done: (code: number) => void): void {
  program
    .command('serve')
    .description('Run the agent: HTTP server mode (default), or --stdio for a client that spawned it')
    .option('--stdio', 'speak JSON-RPC over stdin/stdout (local mode)')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--port <port>', 'port to listen on (0: any free port)', intOption(0, 65535), 8080)
    .option('--default-actor <name>', 'the actor of sessions created without one (default builtin/echo)')
    .option('--max-body-bytes <n>', 'largest request body accepted', intOption(1))
    .addHelpText('after', '\nThe server token comes from --token, else CLEVERAGENTS_SERVER_TOKEN, else one is generated and stored in the data dir.')
    .action(async (_opts: unknown, cmd: Command) => {
      const f = cmd.optsWithGlobals<ServeFlags>();
      const opts: ServeOptions = { stdio: f.stdio === true, host: f.host, port: f.port, verbose: f.verbose === true };
      if (f.token) opts.token = f.token;
      if (f.dataDir) opts.dataDir = f.dataDir;
      if (f.defaultActor) opts.defaultActor = f.defaultActor;
      if (f.maxBodyBytes !== undefined) opts.maxBodyBytes = f.maxBodyBytes;
      done(await serve(opts));
    });
}
