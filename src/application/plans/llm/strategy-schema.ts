/** The answer a strategy actor gives: its JSON Schema, its type, and where a re-plan starts. */
import type { Decision } from '../../../domain/plan/plan.ts';

/** Answers off the schema sent back to the actor before the phase gives up. */
export const MAX_STRATEGY_RETRIES = 2;
/** Decisions a strategy may have. */
const MAX_DECISIONS = 20;

const Alternative = {
  type: 'object',
  properties: {
    option: { type: 'string', minLength: 1, maxLength: 2000 },
    reason: { type: 'string', minLength: 1, maxLength: 4000, description: 'why it was not chosen' },
  },
  required: ['option', 'reason'],
  additionalProperties: false,
};
const Confidence = { type: 'number', minimum: 0, maximum: 1 };

/** The structured answer of a strategy actor. */
export const STRATEGY_SCHEMA: Record<string, unknown> = {
  type: 'object',
  properties: {
    approach: { type: 'string', minLength: 1, maxLength: 4000, description: 'how the goal will be reached' },
    rationale: { type: 'string', minLength: 1, maxLength: 8000 },
    confidence: Confidence,
    alternatives: { type: 'array', maxItems: 10, items: Alternative, description: 'other approaches weighed' },
    decisions: {
      type: 'array',
      minItems: 1,
      maxItems: MAX_DECISIONS,
      description: 'the decisions the approach takes, in the order the work follows them',
      items: {
        type: 'object',
        properties: {
          question: { type: 'string', minLength: 1, maxLength: 2000 },
          chosen: { type: 'string', minLength: 1, maxLength: 4000 },
          alternatives: { type: 'array', maxItems: 10, items: Alternative },
          confidence: Confidence,
          rationale: { type: 'string', minLength: 1, maxLength: 8000 },
        },
        required: ['question', 'chosen', 'alternatives', 'confidence', 'rationale'],
        additionalProperties: false,
      },
    },
  },
  required: ['approach', 'rationale', 'confidence', 'decisions'],
  additionalProperties: false,
};

export interface StrategyAnswer {
  approach: string;
  rationale: string;
  confidence: number;
  alternatives?: Array<{ option: string; reason: string }>;
  decisions: Array<{
    question: string;
    chosen: string;
    alternatives: Array<{ option: string; reason: string }>;
    confidence: number;
    rationale: string;
  }>;
}

/** Where a re-plan starts: the decision corrected (and everything after it), with the user's guidance. */
export interface Replan {
  /** The settled decisions (kept), in order. */
  kept: Decision[];
  /** The index the new decisions start at. */
  fromIndex: number;
  guidance: string;
  /** The decision the guidance corrects (absent: guidance after a failed strategize). */
  corrected?: Decision | undefined;
}

/** A decision's choice in words (a stepped decision's tool call as JSON). */
export function chosenOf(d: Decision): string {
  return typeof d.chosen === 'string' ? d.chosen : JSON.stringify(d.chosen);
}
