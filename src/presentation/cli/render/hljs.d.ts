/** The part of highlight.js the chat uses (see hljs.js for why these types are our own). */
export interface Highlighter {
  getLanguage(name: string): object | undefined;
  highlight(code: string, options: { language: string; ignoreIllegals?: boolean }): { value: string };
}
declare const hljs: Highlighter;
export default hljs;
