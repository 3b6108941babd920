// Names and phone numbers unique within one test process, so suites sharing an app never collide.

let numberSeq = 0;
let nameSeq = 0;

/** A phone number: `prefix` (a country outside the Brazilian/Mexican/Argentinian rewriting rules) then eight digits. */
export const uniqueNumber = (prefix: string) => `${prefix}${String(Date.now() % 1_000_000).padStart(6, '0')}${String(++numberSeq).padStart(2, '0')}`;

/** An instance name starting with `prefix`. */
export const uniqueName = (prefix: string) => `${prefix}-${++nameSeq}-${Math.random().toString(36).slice(2, 7)}`;
