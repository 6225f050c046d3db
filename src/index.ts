/** The package's public API for third-party programs: the typed A2A client and its method rows. */
export * from './protocol/client/index.ts';
