import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import { AgentCardProvider } from '../../../../../src/protocol/a2a/agent-card.ts';
import { METHODS } from '../../../../../src/protocol/a2a/method-table.ts';
import { CliError, exitReasonOf } from '../../../../../src/presentation/cli/exit-codes.ts';
import { readCard, renderCard } from '../../../../../src/presentation/cli/render/card.render.ts';
import { Ui } from '../../../../../src/presentation/cli/render/ui.ts';

const plainUi = (): Ui =>
  new Ui('plain', { stdout: new PassThrough(), stderr: new PassThrough(), stdin: new PassThrough(), env: {} }, true);

const ourCard = (): Record<string, unknown> =>
  new AgentCardProvider(
    {
      name: 'CleverAgents',
      description: 'test',
      version: '9.9.9',
      endpoint: 'stdio:',
      auth: 'none',
      pushNotifications: false,
    },
    METHODS,
  ).publicCard('1.0').card;

describe('agents card rendering', () => {
  it("renders our card's provider, capabilities, extension, interfaces and skills", () => {
    const text = renderCard(readCard(ourCard()), plainUi());
    assert.match(text, /^name: CleverAgents$/m);
    assert.match(text, /^version: 9\.9\.9$/m);
    assert.match(text, /^provider: CleverAgents$/m);
    assert.match(text, /^capabilities: streaming, extendedAgentCard$/m);
    assert.match(text, /^extensions: urn:cleveragents:extensions:v1$/m);
    assert.match(text, /^interfaces: JSONRPC 1\.0 stdio:, JSONRPC 0\.3 stdio:$/m);
    assert.match(text, /^skills: plans, chat, tasks, registries, diagnostics$/m);
  });

  it('refuses a card without the A2A shape, naming what is wrong (exit: internal)', () => {
    const { supportedInterfaces: _, ...card } = ourCard();
    const bad = { ...card, capabilities: { extensions: [{ description: 'no uri' }] } };
    assert.throws(
      () => readCard(bad),
      (err: unknown) => {
        assert.ok(err instanceof CliError);
        assert.equal(exitReasonOf(err), 'INTERNAL');
        assert.match(err.message, /^The agent's card is not an A2A Agent Card: /);
        assert.match(err.message, /supportedInterfaces: /);
        assert.match(err.message, /capabilities\.extensions\.0\.uri: /);
        return true;
      },
    );
  });
});
