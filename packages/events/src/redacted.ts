// The text that replaces a credential, in a module of its own: every redaction module uses it, and
// secret-patterns.ts, which exports it, uses them.
export const REDACTED = '[REDACTED]';
