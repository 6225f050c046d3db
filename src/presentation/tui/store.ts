import { initialState, reduce, type Action, type TuiState } from './state.ts';

/** The TUI's state outside React: the controller dispatches into it, the app subscribes to it. */
export class Store {
  private state: TuiState = initialState();
  private readonly listeners = new Set<() => void>();

  get = (): TuiState => this.state;

  dispatch = (a: Action): void => {
    this.state = reduce(this.state, a);
    for (const l of this.listeners) l();
  };

  subscribe = (l: () => void): (() => void) => {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  };
}
