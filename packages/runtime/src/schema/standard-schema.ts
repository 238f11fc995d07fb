/**
 * Standard Schema (https://standardschema.dev): the interface zod 3.24+ and 4 (classic and mini),
 * valibot, arktype and others implement. Tools and flow states accept any schema that has it, so a
 * project is not tied to the zod version crewline was built with.
 */
export interface StandardSchema<Input = unknown, Output = Input> {
  readonly '~standard': {
    readonly version: 1;
    readonly vendor: string;
    validate(value: unknown): StandardResult<Output> | Promise<StandardResult<Output>>;
    readonly types?: { readonly input: Input; readonly output: Output } | undefined;
    /** Standard JSON Schema, where the library offers it (`jsonSchema.input({ target })`). */
    readonly jsonSchema?: unknown;
  };
}

export type StandardResult<Output> =
  | { readonly value: Output; readonly issues?: undefined }
  | { readonly issues: ReadonlyArray<StandardIssue> };

export interface StandardIssue {
  readonly message: string;
  readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined;
}

/** What a schema's validation gives back. */
export type StandardOutput<Schema extends StandardSchema> = NonNullable<
  Schema['~standard']['types']
>['output'];

export function isStandardSchema(value: unknown): value is StandardSchema {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { '~standard'?: { validate?: unknown } })['~standard']?.validate === 'function'
  );
}

/**
 * `path.to.field: message; other: message`, the way a model or a user reads validation issues; an
 * issue of the whole value is named `root` (or shown bare when `root` is empty).
 */
export function describeIssues(issues: ReadonlyArray<StandardIssue>, root = ''): string {
  return issues
    .map((issue) => {
      const path = (issue.path ?? [])
        .map((part) => (typeof part === 'object' && part !== null ? String(part.key) : String(part)))
        .join('.');
      const at = path || root;
      return at ? `${at}: ${issue.message}` : issue.message;
    })
    .join('; ');
}
