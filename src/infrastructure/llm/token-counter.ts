/**
 * Token counts with gpt-tokenizer's o200k_base encoding (GPT-4o and later; close enough for other
 * models' budgets). Its tables load on the first count, once.
 */
import type { TokenCounter } from '../../application/index.ts';

type Count = (text: string) => number;

/** Special-token text ("<|endoftext|>") in a message is counted as ordinary text, never refused. */
const AS_TEXT = { disallowedSpecial: new Set<string>() };

export class GptTokenCounter implements TokenCounter {
  private counter: Promise<Count> | undefined;

  async count(text: string): Promise<number> {
    if (text === '') return 0;
    if (this.counter === undefined) {
      const loading = import('gpt-tokenizer/encoding/o200k_base').then(
        (m): Count =>
          (t) =>
            m.countTokens(t, AS_TEXT),
      );
      this.counter = loading;
      loading.catch(() => {
        if (this.counter === loading) this.counter = undefined; // the next count tries again
      });
    }
    const count = await this.counter;
    return count(text);
  }
}
