import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { chooseInteractively } from '../../../../../src/presentation/cli/init/choose-endpoint.ts';
import type { Found } from '../../../../../src/presentation/cli/init/endpoints.ts';
import type { Prompter } from '../../../../../src/presentation/cli/init/prompt.ts';

/** A prompter that answers from a script and records what it was asked. */
function scripted(picks: number[], answers: string[]): Prompter & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    choose: (q, choices) => {
      asked.push(`${q} ${choices.join('|')}`);
      return Promise.resolve(picks.shift() ?? 0);
    },
    ask: (q, fallback) => {
      asked.push(`${q} [${fallback ?? ''}]`);
      return Promise.resolve(answers.shift() ?? fallback ?? '');
    },
    confirm: (_q, fallback) => Promise.resolve(fallback),
    close: () => undefined,
  };
}

const NOTHING: Found = { ollama: undefined, openaiKey: false, anthropicKey: false };

describe('agents init on a terminal: the model', () => {
  it('offers the models an OpenAI-compatible endpoint lists, as numbered choices', async () => {
    const ask = scripted([0, 1], ['http://127.0.0.1:9/v1', '']);
    const listed: string[] = [];
    const choice = await chooseInteractively({}, NOTHING, ask, (ep) => {
      listed.push(ep.baseUrl);
      return Promise.resolve(['qwen', 'llama']);
    });
    assert.deepEqual(listed, ['http://127.0.0.1:9/v1']);
    assert.equal(choice.model, 'llama');
    assert.ok(ask.asked.includes('Which model? qwen|llama'), ask.asked.join('\n'));
  });

  it("puts the provider's usual model first when the endpoint has it", async () => {
    const ask = scripted([0, 0], []);
    const choice = await chooseInteractively({}, { ...NOTHING, openaiKey: true }, ask, () =>
      Promise.resolve(['gpt-4o', 'gpt-4.1-mini']),
    );
    assert.equal(choice.model, 'gpt-4.1-mini');
    assert.ok(ask.asked.includes('Which model? gpt-4.1-mini|gpt-4o'), ask.asked.join('\n'));
  });

  it('asks for the name when the endpoint lists none (or cannot be asked)', async () => {
    const ask = scripted([0], ['http://127.0.0.1:9/v1', '', 'my-model']);
    const choice = await chooseInteractively({}, NOTHING, ask, () => Promise.resolve([]));
    assert.equal(choice.model, 'my-model');
    assert.ok(
      ask.asked.some((q) => q.startsWith('Model ')),
      ask.asked.join('\n'),
    );
  });
});
