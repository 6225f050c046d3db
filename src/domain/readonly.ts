/**
 * A value seen through a read-only lens all the way down: objects' properties and arrays' items
 * cannot be assigned, pushed or spliced. An aggregate's type outside its module is this (issue #38:
 * a plan is changed only by the domain's functions, which check each change).
 */
export type DeepReadonly<T> = T extends (...args: never[]) => unknown
  ? T
  : T extends ReadonlyArray<infer U>
    ? ReadonlyArray<DeepReadonly<U>>
    : T extends object
      ? { readonly [K in keyof T]: DeepReadonly<T[K]> }
      : T;
