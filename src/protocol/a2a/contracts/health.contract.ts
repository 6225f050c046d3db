import { z } from 'zod';
import { defineContract, type ContractFamily } from '../contract.ts';

export const HealthResult = z.object({
  status: z.enum(['ok', 'degraded']),
  version: z.string(),
  uptimeSeconds: z.number().int().nonnegative(),
  storage: z.enum(['ok', 'unavailable']),
  liveTasks: z.number().int().nonnegative(),
});

export const DiagnosticCheckSchema = z.object({
  name: z.string(),
  category: z.enum(['storage', 'disk', 'versions', 'configuration', 'actors']),
  status: z.enum(['ok', 'warn', 'fail']),
  detail: z.string(),
  hint: z.string().optional(),
});

export const DiagnosticsResult = z.object({
  status: z.enum(['ok', 'warn', 'fail']),
  checks: z.array(DiagnosticCheckSchema),
  summary: z.object({ ok: z.number().int(), warn: z.number().int(), fail: z.number().int() }),
});

export const healthCheck = defineContract({
  name: '_cleveragents/health/check',
  surface: 'extension',
  summary: 'Is the agent alive and its storage reachable?',
  permission: 'system:read',
  params: z.object({}).strict(),
  result: HealthResult,
});

export const diagnosticsRun = defineContract({
  name: '_cleveragents/diagnostics/run',
  surface: 'extension',
  summary:
    "Examine storage, disk, versions, configuration and each LLM actor's endpoint and key; each check has a status and a hint.",
  permission: 'server:admin',
  params: z.object({}).strict(),
  result: DiagnosticsResult,
});

/** The health family: every row of health.contract.ts, in the table's order. */
export const HEALTH_METHODS = {
  healthCheck,
  diagnosticsRun,
} as const satisfies ContractFamily;
