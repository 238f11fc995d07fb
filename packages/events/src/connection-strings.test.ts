import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { REDACTED, redactSecretsInText, scanText } from './secret-patterns.js';
import { credentialsOfEnvironment, registerEnvironmentSecrets } from './secret-values.js';

/** A password of no known shape, never registered: only the rules for connection strings can find it. */
function password(): string {
  return `Pw${randomBytes(10).toString('hex')}`;
}

describe('JDBC connection strings of SQL Server and Oracle', () => {
  it('registers the password of one in the environment, whatever the variable is named', () => {
    const sqlServer = password();
    const braced = [password(), password()];
    const thin = password();
    const thinService = password();
    const environment = {
      CREWLINE_TEST_MSSQL_URL: `jdbc:sqlserver://db.internal:1433;databaseName=app;user=app;password=${sqlServer};encrypt=true`,
      // A value holding `;` is braced, a `}` in it doubled (the driver's escaping).
      CREWLINE_TEST_MSSQL_BRACED: `jdbc:sqlserver://db.internal:1433;Password={${braced[0]};}}${braced[1]}};databaseName=app`,
      CREWLINE_TEST_ORACLE_URL: `jdbc:oracle:thin:scott/${thin}@db.internal:1521/ORCL`,
      CREWLINE_TEST_ORACLE_SERVICE: `jdbc:oracle:thin:scott/${thinService}@//db.internal:1521/sales.example.com`,
    };
    const credentials = credentialsOfEnvironment(environment);
    expect(credentials).toContain(sqlServer);
    expect(credentials).toContain(`${braced[0]};}${braced[1]}`);
    expect(credentials).toContain(thin);
    expect(credentials).toContain(thinService);
    registerEnvironmentSecrets(environment);
    // Alone in a text, where no rule for connection strings applies: only its value gives it away.
    for (const value of [sqlServer, thin, thinService, `${braced[0]};}${braced[1]}`])
      expect(redactSecretsInText(`login failed (${value})`)).toBe(`login failed (${REDACTED})`);
  });

  it('does not register a password that is the user or database name the string shows', () => {
    const environment = {
      CREWLINE_TEST_MSSQL_URL:
        'jdbc:sqlserver://db:1433;databaseName=inventory;user=inventory;password=inventory',
      CREWLINE_TEST_ORACLE_URL: 'jdbc:oracle:thin:warehouse/warehouse@db:1521/ORCL',
    };
    expect(credentialsOfEnvironment(environment)).toEqual([]);
  });

  it('redacts the password of one written in free text, and keeps the rest of it', () => {
    const sqlServer = password();
    const braced = password();
    const punctuated = password();
    const thin = password();
    const thinService = password();
    const cases: [string, string][] = [
      [
        `connecting to jdbc:sqlserver://db.internal:1433;databaseName=app;user=app;password=${sqlServer};encrypt=true failed`,
        `connecting to jdbc:sqlserver://db.internal:1433;databaseName=app;user=app;password=${REDACTED};encrypt=true failed`,
      ],
      [
        `url=jdbc:sqlserver://db.internal;user=app;password={${braced};}}x};databaseName=app`,
        `url=jdbc:sqlserver://db.internal;user=app;password=${REDACTED};databaseName=app`,
      ],
      [
        // Unbraced, a property value ends at `;` only: `,`, `&` and `(` are the password's.
        `jdbc:sqlserver://db.internal;user=app;password=${punctuated},x&y(z;databaseName=app`,
        `jdbc:sqlserver://db.internal;user=app;password=${REDACTED};databaseName=app`,
      ],
      [
        `cannot reach jdbc:oracle:thin:scott/${thin}@db.internal:1521/ORCL: timeout`,
        `cannot reach jdbc:oracle:thin:scott/${REDACTED}@db.internal:1521/ORCL: timeout`,
      ],
      [
        `"jdbc:oracle:thin:scott/${thinService}@//db.internal:1521/sales.example.com"`,
        `"jdbc:oracle:thin:scott/${REDACTED}@//db.internal:1521/sales.example.com"`,
      ],
    ];
    for (const [text, expected] of cases) expect(redactSecretsInText(text), text).toBe(expected);
  });

  it('redacts a password property after `; ` (written with a space), up to the next `;`', () => {
    // ADO.NET strings are often written with a space after each `;`: the property was then read as an
    // assignment, whose value stops at `,`, `&` or `(`, leaving the rest of the password.
    const cases: [string, string][] = [
      [
        'Server=db; User Id=sa; Password=p,a(s)s&w0rd; Encrypt=yes',
        `Server=db; User Id=sa; Password=${REDACTED}; Encrypt=yes`,
      ],
      [
        'jdbc:sqlserver://db:1433;\tuser=app; password=p,a(s)s&w0rd; encrypt=true',
        `jdbc:sqlserver://db:1433;\tuser=app; password=${REDACTED}; encrypt=true`,
      ],
    ];
    for (const [text, expected] of cases) expect(redactSecretsInText(text), text).toBe(expected);
  });

  it('leaves addresses without a password and templates of one alone', () => {
    const text = 'jdbc:oracle:thin:@//db.internal:1521/sales and jdbc:oracle:thin:@db:1521:ORCL';
    expect(redactSecretsInText(text)).toBe(text);
    const templates = [
      `jdbc:sqlserver://db;user=app;password=\${DB_PASSWORD};encrypt=true`,
      // .NET's String.Format, Jinja and Handlebars.
      'In .NET, write Server=db;User Id=sa;Password={0}; and format it.',
      'Jinja: Server=db;Uid=sa;Pwd={{ db_password }};Encrypt=yes',
      `jdbc:oracle:thin:\${DB_USER}/\${DB_PASSWORD}@db:1521/ORCL`,
      'jdbc:oracle:thin:<user>/<password>@//db:1521/svc',
      'jdbc:oracle:thin:app/{{ password }}@//db:1521/svc',
    ];
    for (const template of templates) expect(redactSecretsInText(template), template).toBe(template);
  });

  it('leaves prose about a password property alone', () => {
    // The value starts right after `=`: a space there ends it, it does not lead to the next word.
    for (const prose of [
      'Append ;password= and then your value to the string.',
      'Properties are separated like ;user=sa;password=, then the next one.',
      'Set ;password=... in the connection string',
    ])
      expect(redactSecretsInText(prose), prose).toBe(prose);
    // A value after a space is read as any spaced assignment's: a random one is still a password.
    expect(redactSecretsInText('Server=db;Password= p4ssw0rd99;Encrypt=yes')).toBe(
      `Server=db;Password= ${REDACTED};Encrypt=yes`,
    );
  });

  // The password of an Oracle address was matched without a bound: each `jdbc:oracle:thin:u/` of a
  // long text read to its end (200 KB took 3.3 s).
  it('takes linear time on 200 KB of Oracle addresses without an end', () => {
    const size = 200_000;
    const fill = (unit: string) => unit.repeat(Math.ceil(size / unit.length)).slice(0, size);
    const inputs = {
      'user and slash repeated': fill('jdbc:oracle:thin:u/'),
      'quoted password without its quote': `jdbc:oracle:thin:u/"${fill('a')}`,
      'driver name without its colon': `jdbc:oracle:${fill('a')}`,
    };
    for (const [name, text] of Object.entries(inputs)) {
      let fastest = Number.POSITIVE_INFINITY;
      for (let round = 0; round < 3; round += 1) {
        const started = performance.now();
        scanText(text);
        fastest = Math.min(fastest, performance.now() - started);
      }
      expect(fastest, name).toBeLessThan(100);
    }
  });
});
