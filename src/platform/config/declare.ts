// How a setting is declared: its variable, meaning, default, parser and checks, in one value the loader and the README both read.

/** The environment a configuration is read from (process.env, or a test's own). */
export type Env = Readonly<Record<string, string | undefined>>;

/** The value of another setting, read once: for defaults and rules that depend on it. */
export type ValueOf = <T>(setting: Setting<T>) => T;

/** What reading one setting sees: the environment, the other settings, and where its problems go. */
export interface Reading {
  readonly env: Env;
  readonly settingValue: ValueOf;
  problem(message: string): void;
}

/** A rule a setting's value must keep: the problem's phrase after the variable's name, or undefined when the value is fine. */
export type Check<T> = (value: T, settingValue: ValueOf) => string | undefined;

/** A default worked out at load time (from another setting, from the host), with the text the README shows for it. */
export class ComputedDefault<T> {
  constructor(
    readonly shown: string,
    readonly compute: (settingValue: ValueOf) => T,
  ) {}
}

export function computed<T>(shown: string, compute: (settingValue: ValueOf) => T): ComputedDefault<T> {
  return new ComputedDefault(shown, compute);
}

/** One declared setting; the `Config` type, the loader and the README table are all derived from these. */
export class Setting<T> {
  constructor(
    /** The variable's name, or a family's pattern such as WEBHOOK_EVENTS_<NAME>. */
    readonly env: string,
    readonly meaning: string,
    /** The README's default column. */
    readonly shownDefault: string,
    /** The variable's text meaning the default, when the default is a fixed value: reading it back must raise no problem. */
    readonly defaultText: string | undefined,
    readonly read: (reading: Reading) => T,
  ) {}
}

/** What every kind of setting declares. */
interface Declared<T> {
  env: string;
  /** Further names read when `env` is unset (Evolution's spellings); problems name them as "ENV (or ALIAS)". */
  aliases?: readonly string[];
  meaning: string;
  checks?: readonly Check<T>[];
  /** Shown in the README instead of the default's own text (a value generated or derived when unset). */
  shownDefault?: string;
}

/** Turns the variable's text into a value; a bad text reports `problem` (the phrase after the name) and answers `fallback`. */
type Parse<T> = (text: string, fallback: T, problem: (phrase: string) => void) => T;

interface Scalar<T> extends Declared<T> {
  default: T | ComputedDefault<T>;
  /** The variable's text of the default when it is fixed. */
  defaultText: string | undefined;
  parse: Parse<T>;
  /** Applied to every value, the default's too, before the checks (e.g. trailing slashes removed). */
  tidy?: (value: T) => T;
}

/** An unset or empty variable means "not given" everywhere. */
function given(text: string | undefined): text is string {
  return text !== undefined && text !== '';
}

/** The general kind every single-variable kind is built on: one variable (or an alias), one value, its checks. */
function scalar<T>(options: Scalar<T>): Setting<T> {
  const names = [options.env, ...(options.aliases ?? [])];
  const label = options.aliases?.length ? `${options.env} (or ${options.aliases.join(', ')})` : options.env;
  const shown = options.shownDefault ?? (options.default instanceof ComputedDefault ? options.default.shown : (options.defaultText ?? ''));
  return new Setting(options.env, options.meaning, shown, options.defaultText, ({ env, settingValue, problem }) => {
    const fallback = options.default instanceof ComputedDefault ? options.default.compute(settingValue) : options.default;
    const name = names.find((candidate) => given(env[candidate]));
    let value = name === undefined ? fallback : options.parse(env[name] as string, fallback, (phrase) => problem(`${name} ${phrase}`));
    if (options.tidy) value = options.tidy(value);
    for (const check of options.checks ?? []) {
      const phrase = check(value, settingValue);
      if (phrase !== undefined) problem(`${label} ${phrase}`);
    }
    return value;
  });
}

/** Free text; unset or empty means the default. */
export function text(options: Declared<string> & { default: string | ComputedDefault<string>; tidy?: (value: string) => string }): Setting<string> {
  const defaultText = typeof options.default === 'string' ? options.default : undefined;
  return scalar({ ...options, defaultText, parse: (value) => value });
}

/** Free text with no default: undefined when unset or empty. */
export function optionalText(options: Declared<string | undefined>): Setting<string | undefined> {
  return scalar<string | undefined>({ ...options, default: undefined, defaultText: undefined, parse: (value) => value });
}

/** Any value of type T parsed from the text by the declaration's own function (which never reports a problem). */
export function parsed<T extends string | number | boolean>(options: Declared<T> & { default: T; parse: (text: string) => T }): Setting<T> {
  return scalar({ ...options, defaultText: String(options.default), parse: (value) => options.parse(value) });
}

/** The words an on/off variable accepts; a family of event filters reads them too. */
const parseFlag: Parse<boolean> = (value, fallback, problem) => {
  const lower = value.toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(lower)) return true;
  if (['false', '0', 'no', 'off'].includes(lower)) return false;
  problem(`must be true or false (got "${value}")`);
  return fallback;
};

export function flag(options: Declared<boolean> & { default: boolean }): Setting<boolean> {
  return scalar({ ...options, defaultText: String(options.default), parse: parseFlag });
}

interface NumberDeclared extends Declared<number> {
  /** In the variable's unit (a computed default too). */
  default: number | ComputedDefault<number>;
  /** Bounds in the variable's unit. */
  min: number;
  max: number;
  /** Multiplies the variable's value into the configuration's unit (1000: seconds given, milliseconds kept). */
  scale?: number;
}

function numeric(options: NumberDeclared, whole: boolean): Setting<number> {
  const { min, max, scale = 1 } = options;
  const kind = whole ? 'a whole number' : 'a number';
  const given = options.default;
  return scalar({
    ...options,
    default: given instanceof ComputedDefault ? new ComputedDefault(given.shown, (settingValue) => given.compute(settingValue) * scale) : given * scale,
    defaultText: given instanceof ComputedDefault ? undefined : String(given),
    parse: (value, fallback, problem) => {
      const parsed = Number(value);
      const valid = whole ? Number.isInteger(parsed) : Number.isFinite(parsed);
      if (valid && parsed >= min && parsed <= max) return parsed * scale;
      problem(`must be ${kind} from ${min} to ${max} (got "${value}")`);
      return fallback;
    },
  });
}

export function wholeNumber(options: NumberDeclared): Setting<number> {
  return numeric(options, true);
}

/** A number that may carry decimals. */
export function decimal(options: NumberDeclared): Setting<number> {
  return numeric(options, false);
}

/** A comma list; blanks between commas are dropped. */
export function commaList<T extends string | number>(options: Declared<T[]> & { default: T[]; item: (text: string) => T }): Setting<T[]> {
  return scalar({
    ...options,
    defaultText: options.default.join(','),
    parse: (value) =>
      value
        .split(',')
        .map((part) => part.trim())
        .filter(Boolean)
        .map(options.item),
  });
}

/**
 * A family of on/off variables `<PREFIX>_EVENTS_<NAME>`, read into `{ NAME: on }`: the global filter of one event sink.
 * `ignored` names share the prefix without being events (read and checked all the same, left out of the filter).
 */
export function eventFilter(options: { prefix: string; meaning: string; ignored?: readonly string[] }): Setting<Record<string, boolean>> {
  const variable = new RegExp(`^${options.prefix}_EVENTS_([A-Z0-9_]+)$`);
  return new Setting(`${options.prefix}_EVENTS_<NAME>`, options.meaning, '(all on)', undefined, ({ env, problem }) => {
    const filter: Record<string, boolean> = {};
    for (const [name, value] of Object.entries(env)) {
      const match = variable.exec(name);
      if (!match || !given(value)) continue;
      const on = parseFlag(value, true, (phrase) => problem(`${name} ${phrase}`));
      if (!options.ignored?.includes(match[1])) filter[match[1]] = on;
    }
    return filter;
  });
}

/** Checks that a text matches `pattern` (an unset optional text is not checked; with `exceptEmpty`, nor is an empty one). */
export function matching(pattern: RegExp, phrase: string, options: { exceptEmpty?: boolean } = {}): Check<string | undefined> {
  return (value) => (value === undefined || (options.exceptEmpty && value === '') || pattern.test(value) ? undefined : phrase);
}

/** Checks that a value is given whenever the `on` switch is on. */
export function requiredWhen(on: Setting<boolean>): Check<unknown> {
  return (value, settingValue) => (settingValue(on) && !value ? `is required when ${on.env}=true` : undefined);
}

/** Checks that a number is not below another setting's. */
export function notBelow(other: Setting<number>): Check<number> {
  return (value, settingValue) => (value < settingValue(other) ? `must not be below ${other.env}` : undefined);
}

/** Tidies a base URL so paths can be appended with one slash. */
export function withoutTrailingSlashes(url: string): string {
  return url.replace(/\/+$/, '');
}
