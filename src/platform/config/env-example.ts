// The `.env.example` file, rendered from the declared settings (npm run docs:config writes it; a test compares).
import { settings } from './settings/index.js';
import { settingsOf } from './tree.js';

const header = [
  '# Switchboard configuration: copy to `.env` (read at start) and uncomment what you change.',
  '# Each line shows the default; generated from src/platform/config/settings/ by `npm run docs:config`, do not edit.',
  '# Every variable is explained in README.md (Configuration).',
];

/** Markdown marks dropped: the comment is read as plain text. */
function plain(meaning: string): string {
  return meaning.replaceAll('`', '').replace(/\s+/g, ' ').trim();
}

/** The text of `.env.example`: every setting as a commented line with its default, under its one-line meaning. */
export function envExample(): string {
  const entries = settingsOf(settings).map((setting) => {
    const value = setting.defaultText ?? '';
    // A default that is not a fixed text (generated, derived, computed at start) is named in the comment instead.
    const shown = setting.shownDefault !== value && setting.shownDefault !== '' ? ` Default: ${setting.shownDefault}.` : '';
    return `# ${plain(setting.meaning)}${shown}\n# ${setting.env}=${value}`;
  });
  return `${[header.join('\n'), ...entries].join('\n\n')}\n`;
}
