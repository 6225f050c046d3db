import * as vscode from 'vscode';
import type { FileDiffTexts, PlansController } from '../core/plans.ts';

const SCHEME = 'cleveragents-diff';

/**
 * A plan's changes in VS Code's diff editor: both sides are read-only documents of this scheme,
 * served from the texts the core rebuilt (the sandbox is not the user's to edit).
 */
export class DiffEditor implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly texts = new Map<string, string>();
  private readonly registration = vscode.workspace.registerTextDocumentContentProvider(SCHEME, this);

  private readonly plans: PlansController;

  constructor(plans: PlansController) {
    this.plans = plans;
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.toString()) ?? '';
  }

  /** Opens the plan's diff: one file straight away, several through a picker of the changed files. */
  async show(planId: string, name: string): Promise<void> {
    const files = await this.plans.diffTexts(planId);
    if (files.length === 0) {
      void vscode.window.showInformationMessage(`Plan ${name} has no changes.`);
      return;
    }
    const pick =
      files.length === 1
        ? files[0]
        : (
            await vscode.window.showQuickPick(
              files.map((f) => ({
                label: f.path,
                description: `${f.status}${f.complete ? '' : ' · changed parts only'}`,
                file: f,
              })),
              { title: `Changes of plan ${name}`, placeHolder: 'the file to compare' },
            )
          )?.file;
    if (pick) await this.open(planId, name, pick);
  }

  private async open(planId: string, name: string, f: FileDiffTexts): Promise<void> {
    if (f.binary) {
      void vscode.window.showInformationMessage(`${f.path} is a binary file: its change cannot be shown as text.`);
      return;
    }
    const uri = (side: string): vscode.Uri =>
      vscode.Uri.from({ scheme: SCHEME, path: `/${planId}/${side}/${f.path}`, query: String(Date.now()) });
    const left = uri('original');
    const right = uri('modified');
    this.texts.set(left.toString(), f.original);
    this.texts.set(right.toString(), f.modified);
    const title = `${f.path} (plan ${name}${f.complete ? '' : ', changed parts only'})`;
    await vscode.commands.executeCommand('vscode.diff', left, right, title, { preview: true });
  }

  dispose(): void {
    this.registration.dispose();
    this.texts.clear();
  }
}
