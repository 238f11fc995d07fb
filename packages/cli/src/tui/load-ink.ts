/**
 * Ink decides once, when it is first imported, whether it runs in CI (`CI` or
 * `CONTINUOUS_INTEGRATION` set): there it draws only the final frame, so an interactive browser
 * would show a blank screen until it exits. The browser only opens on a real terminal (stdin and
 * stdout are TTYs), so it imports Ink with those two variables hidden, then puts them back.
 */
export async function importInteractiveInk(): Promise<typeof import('ink')> {
  const hidden = ['CI', 'CONTINUOUS_INTEGRATION'] as const;
  const saved = hidden.map((name) => [name, process.env[name]] as const);
  for (const name of hidden) delete process.env[name];
  try {
    return await import('ink');
  } finally {
    for (const [name, value] of saved) if (value !== undefined) process.env[name] = value;
  }
}
