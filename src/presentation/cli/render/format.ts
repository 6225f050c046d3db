/** How a command prints its result. */
export const OUTPUT_FORMATS = ['rich', 'json', 'yaml', 'plain'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

export const isOutputFormat = (v: unknown): v is OutputFormat =>
  typeof v === 'string' && (OUTPUT_FORMATS as readonly string[]).includes(v);

/** json and yaml print exactly one envelope; rich and plain are for people and grep. */
export const isMachineFormat = (f: OutputFormat): boolean => f === 'json' || f === 'yaml';
