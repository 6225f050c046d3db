import * as vscode from 'vscode';
import type { Connection } from '../core/connection.ts';
import { isRunning, type PlansController, type PlanStatus } from '../core/plans.ts';
import { statusBarView } from '../core/status.ts';

/** While a plan runs, how often the item asks for the plans again (another client may run them too). */
const POLL_MS = 3000;

/** The status-bar item for running plans; it asks for the list only while the agent is connected. */
export class StatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 50);
  private plans: PlanStatus[] = [];
  private timer: NodeJS.Timeout | undefined;
  private readonly stops: Array<() => void>;
  private readonly conn: Connection;
  private readonly controller: PlansController;

  constructor(conn: Connection, controller: PlansController) {
    this.conn = conn;
    this.controller = controller;
    this.item.name = 'CleverAgents plans';
    this.stops = [conn.onState(() => void this.refresh()), controller.onChange(() => void this.refresh())];
  }

  async refresh(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.conn.state.kind === 'connected') {
      try {
        this.plans = await this.controller.list();
      } catch {
        // the connection's state says what went wrong; the item shows it
      }
    }
    this.render();
    if (this.conn.state.kind === 'connected' && this.plans.some((p) => isRunning(p) && !p.waiting))
      this.timer = setTimeout(() => void this.refresh(), POLL_MS);
  }

  private render(): void {
    const view = statusBarView(this.conn.state, this.plans);
    if (!view.visible) return this.item.hide();
    this.item.text = view.text;
    this.item.tooltip = view.tooltip;
    this.item.command = view.command;
    this.item.backgroundColor = view.alert ? new vscode.ThemeColor('statusBarItem.errorBackground') : undefined;
    this.item.show();
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    for (const stop of this.stops) stop();
    this.item.dispose();
  }
}
