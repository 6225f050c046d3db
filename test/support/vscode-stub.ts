/**
 * A stand-in for the `vscode` module, enough to activate the bundled extension in Node.js (VS Code
 * itself cannot be downloaded here) and to drive its chat webview: it records what the extension
 * registers and posts, and answers pickers and prompts as a test says.
 */
import Module from 'node:module';
import { join } from 'node:path';

type Fn = (...args: any[]) => any;

export interface Recorded {
  commands: Map<string, Fn>;
  webviews: Map<string, any>;
  treeViews: Map<string, any>;
  contentProviders: Map<string, any>;
  posted: any[];
  errors: string[];
  infos: string[];
  executed: Array<[string, ...unknown[]]>;
  /** What the webview's handler receives: call it as the webview's script would post. */
  toExtension?: (msg: unknown) => void;
  statusItems: any[];
}

class EventEmitter<T> {
  private listeners: Array<(v: T) => void> = [];
  event = (fn: (v: T) => void): { dispose(): void } => {
    this.listeners.push(fn);
    return { dispose: () => (this.listeners = this.listeners.filter((l) => l !== fn)) };
  };
  fire(v: T): void {
    for (const l of this.listeners) l(v);
  }
  dispose(): void {
    this.listeners = [];
  }
}

class Uri {
  readonly scheme: string;
  readonly path: string;
  readonly query: string;

  constructor(scheme: string, path: string, query = '') {
    this.scheme = scheme;
    this.path = path;
    this.query = query;
  }
  static file(p: string): Uri {
    return new Uri('file', p);
  }
  static joinPath(u: Uri, ...parts: string[]): Uri {
    return new Uri(u.scheme, join(u.path, ...parts));
  }
  static from(c: { scheme: string; path: string; query?: string }): Uri {
    return new Uri(c.scheme, c.path, c.query ?? '');
  }
  get fsPath(): string {
    return this.path;
  }
  toString(): string {
    return `${this.scheme}://${this.path}${this.query ? `?${this.query}` : ''}`;
  }
}

const disposable = { dispose: (): void => {} };

/** Makes `require('vscode')` answer the stub; returns what the extension did with it. */
export function installVscodeStub(
  settings: Record<string, unknown>,
  answers: { quickPick?: (items: any[]) => any } = {},
) {
  const rec: Recorded = {
    commands: new Map(),
    webviews: new Map(),
    treeViews: new Map(),
    contentProviders: new Map(),
    posted: [],
    errors: [],
    infos: [],
    executed: [],
    statusItems: [],
  };
  const secrets = new Map<string, string>();
  const api = {
    Uri,
    EventEmitter,
    ThemeIcon: class {
      readonly id: string;

      constructor(id: string) {
        this.id = id;
      }
    },
    ThemeColor: class {
      readonly id: string;

      constructor(id: string) {
        this.id = id;
      }
    },
    TreeItem: class {
      readonly label: string;
      readonly collapsibleState: number;

      constructor(label: string, collapsibleState: number) {
        this.label = label;
        this.collapsibleState = collapsibleState;
      }
    },
    TreeItemCollapsibleState: { None: 0, Collapsed: 1, Expanded: 2 },
    StatusBarAlignment: { Left: 1, Right: 2 },
    window: {
      createOutputChannel: () => ({ appendLine: () => {}, show: () => {}, dispose: () => {} }),
      createStatusBarItem: () => {
        const item = {
          text: '',
          tooltip: '',
          visible: false,
          show: () => (item.visible = true),
          hide: () => (item.visible = false),
          dispose: () => {},
        };
        rec.statusItems.push(item);
        return item;
      },
      registerWebviewViewProvider: (id: string, provider: unknown) => {
        rec.webviews.set(id, provider);
        return disposable;
      },
      createTreeView: (id: string, opts: unknown) => {
        rec.treeViews.set(id, opts);
        return disposable;
      },
      showQuickPick: (items: any[]) => Promise.resolve(answers.quickPick?.(items)),
      showInputBox: () => Promise.resolve(undefined),
      showInformationMessage: (m: string) => {
        rec.infos.push(m);
        return Promise.resolve(undefined);
      },
      showWarningMessage: () => Promise.resolve(undefined),
      withProgress: (_o: unknown, task: () => Promise<unknown>) => task(),
      showErrorMessage: (m: string) => {
        rec.errors.push(m);
        return Promise.resolve(undefined);
      },
    },
    commands: {
      registerCommand: (id: string, fn: Fn) => {
        rec.commands.set(id, fn);
        return disposable;
      },
      executeCommand: (id: string, ...args: unknown[]) => {
        rec.executed.push([id, ...args]);
        const own = rec.commands.get(id);
        return Promise.resolve(own ? own(...args) : undefined);
      },
    },
    workspace: {
      getConfiguration: () => ({ get: (key: string, dflt: unknown) => settings[`cleveragents.${key}`] ?? dflt }),
      workspaceFolders: undefined,
      onDidChangeConfiguration: () => disposable,
      registerTextDocumentContentProvider: (scheme: string, p: unknown) => {
        rec.contentProviders.set(scheme, p);
        return disposable;
      },
    },
  };
  const m = Module as unknown as { _load: Fn };
  const load = m._load;
  m._load = function (request: string, ...rest: unknown[]) {
    if (request === 'vscode') return api;
    return load.call(this, request, ...rest);
  };
  return Object.assign(rec, {
    context: {
      subscriptions: [] as Array<{ dispose(): void }>,
      extensionUri: Uri.file('/ext'),
      secrets: {
        get: (k: string) => Promise.resolve(secrets.get(k)),
        store: (k: string, v: string) => Promise.resolve(void secrets.set(k, v)),
        delete: (k: string) => Promise.resolve(void secrets.delete(k)),
        onDidChange: () => disposable,
      },
    },
    /** A webview for the chat view provider: what it posts is recorded, and the test posts to it. */
    webviewView: () => {
      const view = {
        webview: {
          options: {},
          html: '',
          cspSource: 'vscode-resource:',
          asWebviewUri: (u: Uri) => u,
          postMessage: (msg: unknown) => {
            rec.posted.push(msg);
            return Promise.resolve(true);
          },
          onDidReceiveMessage: (fn: (m: unknown) => void) => {
            rec.toExtension = fn;
            return disposable;
          },
        },
        onDidDispose: () => disposable,
        show: () => {},
      };
      return view;
    },
  });
}
