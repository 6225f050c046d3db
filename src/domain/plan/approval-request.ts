/**
 * What a task that waits for an approval asks (the `approvalRequest` data part of its
 * input-required status, and a waiting plan's `waiting.request`): a tool call of a plan's step or
 * of a chat turn, or a plan's apply. One schema for the producers and every front end.
 */
import { z } from 'zod';
import { PolicyVerdict } from './policy.ts';

/** The answers a request offers. */
export const APPROVAL_OPTIONS = ['approve', 'always', 'reject', 'reject-with-guidance'] as const;

// Loose: a newer server may add fields, which an older client keeps and ignores.
export const ApprovalRequest = z.looseObject({
  kind: z.enum(['tool-call', 'apply']),
  planId: z.string().optional(),
  /** The step's (or, for a goal plan, the run's) decision. */
  decisionId: z.string().optional(),
  /** A goal plan's or a chat's call: the model's call id. */
  callId: z.string().optional(),
  /** The step (1-based) and, for a stepped action, how many there are. */
  step: z.number().int().optional(),
  of: z.number().int().optional(),
  tool: z.string().optional(),
  args: z.record(z.string(), z.unknown()).optional(),
  /** What the call would do, to show: its diff, its command line (`$ …`), or its arguments. */
  preview: z.string().optional(),
  /** A file tool's unified diff against the file as it is. */
  diff: z.string().optional(),
  /** The command line a call runs, and where (relative to the sandbox or project root). */
  command: z.string().optional(),
  cwd: z.string().optional(),
  /** Why no diff could be made (the file could not be read, …). */
  previewProblem: z.string().optional(),
  policy: PolicyVerdict.optional(),
  /** An apply: the changed files (`<status> <path>`) and their totals. */
  files: z.array(z.string()).optional(),
  stats: z.object({ files: z.number().int(), additions: z.number().int(), deletions: z.number().int() }).optional(),
  options: z.array(z.string()).optional(),
});
export type ApprovalRequest = z.infer<typeof ApprovalRequest>;
