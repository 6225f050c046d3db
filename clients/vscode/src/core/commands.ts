/**
 * Every command the extension contributes: the manifest's `contributes.commands` must list exactly
 * these (a test checks it), and the adapter registers a handler for each (a total table).
 */
export const COMMANDS = [
  { id: 'cleveragents.newChat', title: 'New Chat Session', icon: '$(add)' },
  { id: 'cleveragents.resumeChat', title: 'Resume Chat Session…', icon: '$(history)' },
  { id: 'cleveragents.cancelTurn', title: 'Cancel the Running Chat Turn', icon: '$(debug-stop)' },
  { id: 'cleveragents.newPlan', title: 'New Plan from an Action…', icon: '$(add)' },
  { id: 'cleveragents.refreshPlans', title: 'Refresh Plans', icon: '$(refresh)' },
  { id: 'cleveragents.showPlanStatus', title: 'Show Plan Status', icon: '$(info)' },
  { id: 'cleveragents.executePlan', title: 'Execute Plan', icon: '$(play)' },
  { id: 'cleveragents.approvePlan', title: 'Approve', icon: '$(check)' },
  { id: 'cleveragents.rejectPlan', title: 'Reject…', icon: '$(close)' },
  { id: 'cleveragents.diffPlan', title: 'Show Plan Diff', icon: '$(diff)' },
  { id: 'cleveragents.applyPlan', title: 'Apply Plan', icon: '$(git-merge)' },
  { id: 'cleveragents.cancelPlan', title: 'Cancel Plan', icon: '$(circle-slash)' },
  { id: 'cleveragents.showRunningPlans', title: 'Show Running Plans', icon: '$(list-tree)' },
  { id: 'cleveragents.setServerToken', title: 'Set Server Token', icon: '$(key)' },
  { id: 'cleveragents.clearServerToken', title: 'Clear Server Token', icon: '$(trash)' },
  { id: 'cleveragents.reconnect', title: 'Reconnect to the Agent', icon: '$(debug-restart)' },
  { id: 'cleveragents.showLog', title: 'Show Agent Log', icon: '$(output)' },
] as const;

export type CommandId = (typeof COMMANDS)[number]['id'];

/** The command category shown in the palette ("CleverAgents: New Chat Session"). */
export const CATEGORY = 'CleverAgents';

/** The ids of the views, shared by the manifest and the adapter. */
export const VIEWS = {
  container: 'cleveragents',
  chat: 'cleveragents.chat',
  plans: 'cleveragents.plans',
} as const;

/** The plan operations on a plan row, and the `:op:` its contextValue carries when the plan allows it. */
export const PLAN_ITEM_COMMANDS: ReadonlyArray<{ command: CommandId; when: string }> = [
  { command: 'cleveragents.approvePlan', when: ':approve:' },
  { command: 'cleveragents.rejectPlan', when: ':reject:' },
  { command: 'cleveragents.executePlan', when: ':execute:' },
  { command: 'cleveragents.diffPlan', when: ':diff:' },
  { command: 'cleveragents.applyPlan', when: ':apply:' },
  { command: 'cleveragents.cancelPlan', when: ':cancel:' },
];
