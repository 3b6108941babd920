// The README's configuration table, rendered from the declared settings (npm run docs:config writes it; a test compares).
import { settings } from './settings/index.js';
import { settingsOf } from './tree.js';

/** One row of the table. */
export interface SettingDoc {
  env: string;
  default: string;
  meaning: string;
}

export const settingDocs: SettingDoc[] = settingsOf(settings).map(({ env, shownDefault, meaning }) => ({ env, default: shownDefault, meaning }));

const start = '<!-- config-table:start -->';
const end = '<!-- config-table:end -->';

/** The Markdown table of every setting. */
function configTable(): string {
  const rows = settingDocs.map((s) => `| \`${s.env}\` | ${s.default === '' ? '(empty)' : `\`${s.default}\``} | ${s.meaning} |`);
  return ['| Variable | Default | Meaning |', '|---|---|---|', ...rows].join('\n');
}

/** `readme` with the text between its config-table markers replaced by the table. */
export function withConfigTable(readme: string): string {
  const from = readme.indexOf(start);
  const to = readme.indexOf(end);
  if (from < 0 || to < 0) throw new Error('README.md has no config-table markers');
  return `${readme.slice(0, from + start.length)}\n${configTable()}\n${readme.slice(to)}`;
}
