import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import { ChatController, type ChatEvent } from '../core/chat.ts';
import { parseViewMessage, VIEW_LOG_LIMIT, type HostMessage, type ViewMessage } from '../core/chat-view-protocol.ts';
import type { Connection } from '../core/connection.ts';

/**
 * The chat view: a webview that renders the core's chat events and sends the user's input back.
 * The view keeps nothing of its own: on (re)load it asks for the log and redraws from it.
 */
export class ChatView implements vscode.WebviewViewProvider {
  readonly chat: ChatController;
  private view: vscode.WebviewView | undefined;
  private log: ChatEvent[] = [];
  private readonly media: vscode.Uri;
  private readonly commands: { newSession: () => Thenable<unknown>; resumeSession: () => Thenable<unknown> };

  constructor(
    media: vscode.Uri,
    conn: Connection,
    commands: { newSession: () => Thenable<unknown>; resumeSession: () => Thenable<unknown> },
  ) {
    this.media = media;
    this.commands = commands;
    this.chat = new ChatController(conn, (e) => this.push(e));
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    view.webview.options = { enableScripts: true, localResourceRoots: [this.media] };
    view.webview.html = this.html(view.webview);
    view.webview.onDidReceiveMessage((raw: unknown) => {
      const m = parseViewMessage(raw);
      if (m) void this.onMessage(m);
    });
    view.onDidDispose(() => (this.view = undefined));
  }

  /** Shows the view (e.g. before a command starts a session in it). */
  async reveal(): Promise<void> {
    if (this.view) this.view.show(true);
    else await vscode.commands.executeCommand('cleveragents.chat.focus');
  }

  private async onMessage(m: ViewMessage): Promise<void> {
    if (m.type === 'ready') return this.post({ type: 'events', events: this.log, reset: true });
    if (m.type === 'send') return void (await this.chat.send(m.text));
    if (m.type === 'answer') return void (await this.chat.answer(m.decision, m.guidance));
    if (m.type === 'cancel') return void (await this.chat.cancel());
    if (m.type === 'newSession') return void (await this.commands.newSession());
    return void (await this.commands.resumeSession());
  }

  private push(e: ChatEvent): void {
    // A new session starts a new page; its events replace the old log.
    if (e.type === 'session') this.log = [];
    this.log.push(e);
    if (this.log.length > VIEW_LOG_LIMIT) this.log.splice(0, this.log.length - VIEW_LOG_LIMIT);
    void this.post({ type: 'events', events: [e], reset: e.type === 'session' });
  }

  private async post(m: HostMessage): Promise<void> {
    await this.view?.webview.postMessage(m);
  }

  private html(webview: vscode.Webview): string {
    const nonce = randomBytes(16).toString('base64');
    const script = webview.asWebviewUri(vscode.Uri.joinPath(this.media, 'chat.js'));
    const style = webview.asWebviewUri(vscode.Uri.joinPath(this.media, 'chat.css'));
    // Model output is shown as text only (the script never sets innerHTML); the CSP backs that up.
    const csp = `default-src 'none'; style-src ${webview.cspSource}; script-src 'nonce-${nonce}'; img-src ${webview.cspSource};`;
    return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link href="${style.toString()}" rel="stylesheet">
<title>CleverAgents</title>
</head>
<body>
<header id="header"><span id="session">No session yet: type to start one with the default actor.</span>
<span class="actions"><button id="new" title="New session">New</button><button id="resume" title="Resume a session">Resume</button></span></header>
<main id="log" aria-live="polite"></main>
<form id="composer">
<textarea id="input" rows="3" placeholder="Ask the agent… (Enter sends, Shift+Enter for a new line)"></textarea>
<div class="row"><button id="send" type="submit">Send</button><button id="cancel" type="button" disabled>Cancel</button></div>
</form>
<script nonce="${nonce}" src="${script.toString()}"></script>
</body>
</html>`;
  }
}
