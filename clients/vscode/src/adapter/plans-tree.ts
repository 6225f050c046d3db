import * as vscode from 'vscode';
import { errorView } from '../core/errors.ts';
import type { PlansController, PlanTreeItem } from '../core/plans.ts';

/** The plans view: the core's rows as tree items; a failure is one row that says it. */
export class PlansTree implements vscode.TreeDataProvider<PlanTreeItem>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<PlanTreeItem | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly stop: () => void;
  private readonly plans: PlansController;

  constructor(plans: PlansController) {
    this.plans = plans;
    this.stop = plans.onChange(() => this.refresh());
  }

  refresh(): void {
    this.changed.fire(undefined);
  }

  getTreeItem(row: PlanTreeItem): vscode.TreeItem {
    const item = new vscode.TreeItem(
      row.label,
      row.collapsible ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None,
    );
    item.id = row.id;
    item.description = row.description;
    item.tooltip = row.tooltip;
    item.contextValue = row.contextValue;
    item.iconPath = new vscode.ThemeIcon(row.icon);
    if (row.kind === 'plan')
      item.command = { command: 'cleveragents.showPlanStatus', title: 'Show Plan Status', arguments: [row] };
    return item;
  }

  async getChildren(row?: PlanTreeItem): Promise<PlanTreeItem[]> {
    try {
      return await this.plans.children(row);
    } catch (err) {
      const e = errorView(err);
      const label = `Cannot list plans: ${e.message}`;
      return [
        {
          id: `error/${row?.id ?? 'root'}`,
          label,
          description: e.hint ?? '',
          tooltip: e.hint ? `${label}\n${e.hint}` : label,
          kind: 'info',
          planId: row?.planId ?? '',
          contextValue: 'error',
          icon: 'error',
          collapsible: false,
        },
      ];
    }
  }

  dispose(): void {
    this.stop();
    this.changed.dispose();
  }
}
