// A stub so that this branch compiles: the oidc helper's version replaces it at merge.
export function deviceLogin(_opts: {
  card: Record<string, unknown>;
  clientId?: string;
  scope?: string;
  print: (line: string) => void;
  signal: AbortSignal;
}): Promise<{ accessToken: string; refreshToken?: string; expiresAt?: number; tokenUrl: string; clientId: string }> {
  throw new Error('not yet');
}

export function refreshAccessToken(_opts: {
  tokenUrl: string;
  clientId: string;
  refreshToken: string;
}): Promise<{ accessToken: string; refreshToken?: string; expiresAt?: number }> {
  throw new Error('not yet');
}
