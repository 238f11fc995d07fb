import { CrewlineError } from '@crewline/events';
import type { ProviderRegistry } from '@crewline/runtime-state';
import { nearestName } from '@crewline/runtime-state/internal';
import type { CliContext } from '../core/cli-context.js';
import { cliError } from '../core/cli-error.js';
import { isUrl, redactUrl } from '../core/location.js';
import { providersOf } from '../core/providers.js';

/** Schemes a typo is compared with; only those the registry claims are offered. */
const knownSchemes = ['postgres', 'postgresql'];

/** The URL-shaped values of a command's arguments: positionals, `--opt value` and `--opt=value`. */
function urlArguments(args: readonly string[]): string[] {
  return args
    .map((arg) => (arg.startsWith('--') && arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : arg))
    .filter(isUrl);
}

/**
 * The registry's refusal of a URL no provider claims, said for a command-line user: the registry
 * ends with "or pass a provider", which only code can do, and gives no guess for a misspelt scheme
 * (`postgress://`). Undefined when `error` is not that refusal or no argument is such a URL.
 */
export async function unclaimedUrlError(
  error: unknown,
  args: readonly string[],
  context: CliContext,
): Promise<CrewlineError | undefined> {
  if (!CrewlineError.hasCode(error, 'provider_unavailable')) return undefined;
  let providers: ProviderRegistry;
  try {
    providers = await providersOf(context);
  } catch {
    return undefined;
  }
  const url = urlArguments(args).find((value) => providers.entryFor(value) === undefined);
  if (url === undefined) return undefined;
  const scheme = url.slice(0, url.indexOf('://')).toLowerCase();
  const rest = url.slice(url.indexOf('://'));
  const claimed = knownSchemes.filter((known) => providers.entryFor(`${known}${rest}`) !== undefined);
  const nearest = nearestName(scheme, claimed);
  return cliError(
    'provider_unavailable',
    `no checkpoint provider reads ${scheme}:// URLs such as ${redactUrl(url)}${
      nearest === undefined ? '' : ` (did you mean ${nearest}://?)`
    }; crewline reads ${claimed.map((known) => `${known}://`).join(' and ') || 'no'} URLs, JSON directories and .db files; a store of another kind needs its provider's entry in \`providers\` of crewline.config.ts`,
    { cause: error },
  );
}
