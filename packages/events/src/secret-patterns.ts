/**
 * Patterns of credentials that must never reach storage or logs. Deliberately broad: a false positive
 * costs a redacted string, a false negative leaks a key.
 */
const secretValuePatterns: readonly RegExp[] = [
  /\bsk-ant-[A-Za-z0-9_-]{8,}/g, // Anthropic
  /\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{16,}/g, // OpenAI and compatible
  /\bgh[pousr]_[A-Za-z0-9]{20,}/g, // GitHub
  /\bgithub_pat_[A-Za-z0-9_]{20,}/g,
  /\bxox[abposr]-[A-Za-z0-9-]{10,}/g, // Slack
  /\bAKIA[0-9A-Z]{16}\b/g, // AWS access key id
  /\bAIza[0-9A-Za-z_-]{30,}/g, // Google
  /\bhf_[A-Za-z0-9]{20,}/g, // Hugging Face
  /\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}/g, // Stripe
  /\bglpat-[A-Za-z0-9_-]{20,}/g, // GitLab
  /\bnpm_[A-Za-z0-9]{30,}/g, // npm
  /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)/g, // PEM private keys
  /(?<=\b(?:aws_secret_access_key|secret_access_key)\s*[=:]\s*)[A-Za-z0-9/+=]{20,}/gi,
  /\b(?:Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{16,}/g, // authorization header values
  /\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}/g, // JWT
  /(?<=:\/\/[^\s:/@]{1,128}:)[^\s@/]{3,}(?=@)/g, // password inside a URL's userinfo
];

export const REDACTED = '[REDACTED]';

/** Replaces every substring that looks like a known credential with `[REDACTED]`. */
export function redactSecretsInText(text: string): string {
  if (text.length < 8) return text;
  let result = text;
  for (const pattern of secretValuePatterns) {
    pattern.lastIndex = 0;
    if (pattern.test(result)) {
      pattern.lastIndex = 0;
      result = result.replace(pattern, REDACTED);
    }
  }
  return result;
}

const secretKeyWords = new Set([
  'apikey',
  'api_key',
  'secret',
  'secrets',
  'password',
  'passwd',
  'passphrase',
  'authorization',
  'token',
  'accesstoken',
  'refreshtoken',
  'authtoken',
  'bearertoken',
  'idtoken',
  'sessiontoken',
  'credential',
  'credentials',
  'privatekey',
  'clientsecret',
  'cookie',
  'setcookie',
  'auth',
  'pwd',
  'bearer',
  'sessionid',
  'sessionkey',
  'secretkey',
  'signingkey',
  'encryptionkey',
]);

/**
 * True when a property name says its value is a credential (`apiKey`, `OPENAI_API_KEY`,
 * `authorization`, `client_secret`, `x-api-key`). Counters such as `maxTokens` or `inputTokens` are
 * not credentials: only the last one or two words of the name decide.
 */
export function isSecretKey(key: string): boolean {
  const words = key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
  if (words.length === 0) return false;
  const last = words[words.length - 1]!;
  const lastTwo = words.length >= 2 ? `${words[words.length - 2]}${last}` : last;
  return secretKeyWords.has(last) || secretKeyWords.has(lastTwo) || (last === 'key' && words.includes('api'));
}
