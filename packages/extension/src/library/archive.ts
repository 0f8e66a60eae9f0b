// Moved to the engine, where the CLI's --rules reads libraries with the same reader and limits.
export * from '@httpsify/engine/library';
