import * as vscode from 'vscode';
import { COMMANDS, VIEWS, type CommandId } from '../core/commands.ts';
import { Connection } from '../core/connection.ts';
import { ExtensionError, errorView } from '../core/errors.ts';
import {
  argumentValue,
  planItem,
  PlansController,
  type ArgumentValue,
  type PlanStatus,
  type PlanTreeItem,
} from '../core/plans.ts';
import { ChatView } from './chat-view.ts';
import { DiffEditor } from './diff-editor.ts';
import { PlansTree } from './plans-tree.ts';
import { readTarget, TOKEN_KEY } from './settings.ts';
import { StatusBar } from './status-bar.ts';

let connection: Connection | undefined;

type PlanOp = 'execute' | 'approve' | 'reject' | 'apply' | 'cancel' | 'diff' | 'status';

/** Starts the extension: one connection, the chat and plans views, the status bar, the commands. */
export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const output = vscode.window.createOutputChannel('CleverAgents');
  const conn = new Connection(await readTarget(context.secrets), (line) => output.appendLine(line));
  connection = conn;
  const plans = new PlansController(conn);
  const tree = new PlansTree(plans);
  const diff = new DiffEditor(plans);
  const status = new StatusBar(conn, plans);
  const chatView = new ChatView(vscode.Uri.joinPath(context.extensionUri, 'media'), conn, {
    newSession: () => vscode.commands.executeCommand('cleveragents.newChat'),
    resumeSession: () => vscode.commands.executeCommand('cleveragents.resumeChat'),
  });
  const chat = chatView.chat;

  const reconfigure = async (): Promise<void> => {
    await conn.reconfigure(await readTarget(context.secrets));
    tree.refresh();
  };
  conn.onState((s) => {
    if (s.kind === 'exited') output.appendLine(`${s.error.message} — ${s.error.hint ?? ''}`);
  });

  const planOf = (arg: unknown, op: PlanOp): Promise<{ planId: string; name: string } | undefined> =>
    isPlanRow(arg) ? Promise.resolve({ planId: arg.planId, name: arg.label }) : pickPlan(plans, op);

  const handlers: Record<CommandId, (arg?: unknown) => Promise<unknown>> = {
    'cleveragents.newChat': async () => {
      const actors = await chat.actors();
      const items: Array<vscode.QuickPickItem & { name?: string }> = [
        { label: '$(star) default actor' },
        ...actors.map((a) => ({ label: a.name, description: a.description, name: a.name })),
      ];
      const pick = await vscode.window.showQuickPick(items, {
        title: 'New chat session with…',
        matchOnDescription: true,
      });
      if (!pick) return;
      await chatView.reveal();
      await chat.newSession(pick.name ? { actor: pick.name } : {});
    },
    'cleveragents.resumeChat': async () => {
      const sessions = await chat.sessions();
      if (sessions.length === 0) {
        void vscode.window.showInformationMessage('No chat sessions yet: type in the chat view to start one.');
        return;
      }
      const pick = await vscode.window.showQuickPick(
        sessions.map((s) => ({ label: s.title ?? s.id, description: s.actor, detail: s.project ?? '', id: s.id })),
        { title: 'Resume chat session', matchOnDescription: true },
      );
      if (!pick) return;
      await chatView.reveal();
      await chat.resume(pick.id);
    },
    'cleveragents.cancelTurn': async () => {
      if (!(await chat.cancel())) void vscode.window.showInformationMessage('No chat turn is running.');
    },
    'cleveragents.newPlan': async () => {
      const actions = await plans.actions();
      const action = (
        await vscode.window.showQuickPick(
          actions.map((a) => ({ label: a.name, detail: a.description, action: a })),
          { title: 'New plan: the action', matchOnDetail: true },
        )
      )?.action;
      if (!action) return;
      const projects = await plans.projects();
      if (projects.length === 0)
        throw new ExtensionError('no project is registered', 'add one with agents project create NAME --resource R');
      const project = (
        await vscode.window.showQuickPick(
          projects.map((p) => ({ label: p.name, description: p.description })),
          { title: `New plan (${action.name}): the project` },
        )
      )?.label;
      if (!project) return;
      const args: Record<string, ArgumentValue> = {};
      for (const { name, spec } of action.arguments) {
        const text = await vscode.window.showInputBox({
          title: `New plan (${action.name}): ${name}`,
          prompt: `${spec.description ?? name} (${spec.type}${spec.required ? ', required' : ''}${spec.enum ? `: ${spec.enum.join(' | ')}` : ''})`,
          ...(spec.default !== undefined ? { placeHolder: `default: ${String(spec.default)}` } : {}),
          ignoreFocusOut: true,
          validateInput: (t) => {
            const r = argumentValue(spec, t);
            return 'error' in r ? `${name} ${r.error}` : undefined;
          },
        });
        if (text === undefined) return;
        const r = argumentValue(spec, text);
        if ('value' in r && r.value !== undefined) args[name] = r.value;
      }
      const run = await vscode.window.withProgress({ location: { viewId: VIEWS.plans }, title: 'Strategizing…' }, () =>
        plans.use(action.name, project, args),
      );
      const s = run.plan;
      void vscode.window.showInformationMessage(
        s.error
          ? `Plan ${s.name}: ${s.error.message}${s.error.hint ? ` — ${s.error.hint}` : ''}`
          : `Plan ${s.name} is ready (${s.progress.stepsTotal} step${s.progress.stepsTotal === 1 ? '' : 's'}): execute it from the plans view.`,
      );
    },
    'cleveragents.refreshPlans': () => {
      tree.refresh();
      return status.refresh();
    },
    'cleveragents.showPlanStatus': async (arg) => {
      const p = await planOf(arg, 'status');
      if (!p) return;
      const s = await plans.status(p.planId);
      await vscode.window.showInformationMessage(`Plan ${s.name}`, { modal: true, detail: planItem(s).tooltip });
    },
    'cleveragents.executePlan': async (arg) => {
      const p = await planOf(arg, 'execute');
      if (!p) return;
      await plans.execute(p.planId);
      void vscode.window.showInformationMessage(`Executing plan ${p.name} in its sandbox…`);
    },
    'cleveragents.approvePlan': async (arg) => {
      const p = await planOf(arg, 'approve');
      if (p) await plans.approve(p.planId);
    },
    'cleveragents.rejectPlan': async (arg) => {
      const p = await planOf(arg, 'reject');
      if (!p) return;
      const guidance = await vscode.window.showInputBox({
        title: `Reject what plan ${p.name} waits for`,
        prompt: 'Guidance (optional): what to do instead. Escape keeps the plan waiting.',
      });
      if (guidance === undefined) return;
      await plans.reject(p.planId, guidance);
    },
    'cleveragents.diffPlan': async (arg) => {
      const p = await planOf(arg, 'diff');
      if (p) await diff.show(p.planId, p.name);
    },
    'cleveragents.applyPlan': async (arg) => {
      const p = await planOf(arg, 'apply');
      if (!p) return;
      const yes = await vscode.window.showWarningMessage(
        `Apply plan ${p.name}?`,
        { modal: true, detail: 'Its changes are merged into the project as one commit.' },
        'Apply',
      );
      if (yes !== 'Apply') return;
      const run = await plans.apply(p.planId);
      const commits = run.plan.applied?.commits.map((c) => c.commit?.slice(0, 10) ?? c.resource).join(', ');
      void vscode.window.showInformationMessage(
        run.plan.state === 'applied'
          ? `Plan ${p.name} applied (${commits ?? 'done'}).`
          : `Plan ${p.name}: ${run.plan.state}`,
      );
    },
    'cleveragents.cancelPlan': async (arg) => {
      const p = await planOf(arg, 'cancel');
      if (!p) return;
      const yes = await vscode.window.showWarningMessage(
        `Cancel plan ${p.name}?`,
        { modal: true, detail: 'A running step is stopped; the sandbox stays for inspection.' },
        'Cancel Plan',
      );
      if (yes === 'Cancel Plan') await plans.cancel(p.planId);
    },
    'cleveragents.showRunningPlans': async () => vscode.commands.executeCommand(`${VIEWS.plans}.focus`),
    'cleveragents.setServerToken': async () => {
      const token = await vscode.window.showInputBox({
        title: 'CleverAgents server token',
        prompt: 'An API key or the server token; kept in VS Code’s secret storage, never in settings.',
        password: true,
        ignoreFocusOut: true,
      });
      if (token === undefined) return;
      if (token.trim() === '')
        throw new ExtensionError('the token is empty', 'paste the key that agents key create printed');
      await context.secrets.store(TOKEN_KEY, token.trim());
      await reconfigure();
    },
    'cleveragents.clearServerToken': async () => {
      await context.secrets.delete(TOKEN_KEY);
      await reconfigure();
    },
    'cleveragents.reconnect': async () => {
      await reconfigure();
      await conn.client();
      void vscode.window.showInformationMessage('Connected to the agent.');
    },
    'cleveragents.showLog': () => Promise.resolve(output.show(true)),
  };

  context.subscriptions.push(
    output,
    tree,
    diff,
    status,
    vscode.window.registerWebviewViewProvider(VIEWS.chat, chatView, {
      webviewOptions: { retainContextWhenHidden: true },
    }),
    vscode.window.createTreeView(VIEWS.plans, { treeDataProvider: tree, showCollapseAll: true }),
    ...COMMANDS.map((c) => vscode.commands.registerCommand(c.id, (arg?: unknown) => run(handlers[c.id], arg))),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration('cleveragents')) void run(reconfigure);
    }),
    context.secrets.onDidChange((e) => {
      if (e.key === TOKEN_KEY) void run(reconfigure);
    }),
    { dispose: () => void conn.close() },
  );
}

/** Stops the local agent. */
export async function deactivate(): Promise<void> {
  await connection?.close();
  connection = undefined;
}

/** Runs a command; a failure is an error notification with its hint, never an unhandled rejection. */
async function run(fn: (arg?: unknown) => Promise<unknown>, arg?: unknown): Promise<void> {
  try {
    await fn(arg);
  } catch (err) {
    const e = errorView(err);
    const action = await vscode.window.showErrorMessage(
      `CleverAgents: ${e.message}${e.hint ? ` — ${e.hint}` : ''}`,
      'Show Log',
    );
    if (action === 'Show Log') await vscode.commands.executeCommand('cleveragents.showLog');
  }
}

function isPlanRow(arg: unknown): arg is PlanTreeItem {
  return typeof arg === 'object' && arg !== null && (arg as PlanTreeItem).kind === 'plan';
}

/** From the palette: a picker of the plans the operation applies to. */
async function pickPlan(plans: PlansController, op: PlanOp): Promise<{ planId: string; name: string } | undefined> {
  const all = await plans.list();
  const fits = (p: PlanStatus): boolean =>
    op === 'status' ? true : op === 'diff' ? p.phase !== 'strategize' : p.allowed.includes(op);
  const candidates = all.filter(fits);
  if (candidates.length === 0) {
    void vscode.window.showInformationMessage(`No plan can ${op === 'status' ? 'be shown' : op} now.`);
    return undefined;
  }
  const pick = await vscode.window.showQuickPick(
    candidates.map((p) => ({ label: p.name, description: planItem(p).description, detail: p.planId, plan: p })),
    { title: `Plan to ${op}`, matchOnDetail: true },
  );
  return pick ? { planId: pick.plan.planId, name: pick.plan.name } : undefined;
}
