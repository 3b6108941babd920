// Rewrites the configuration table in README.md from the settings documented in src/config.ts.
import { readFileSync, writeFileSync } from 'node:fs';
import { settingDocs } from '../src/platform/config.js';

const start = '<!-- config-table:start -->';
const end = '<!-- config-table:end -->';
const rows = settingDocs.map((s) => `| \`${s.env}\` | ${s.default === '' ? '(empty)' : `\`${s.default}\``} | ${s.meaning} |`);
const table = ['| Variable | Default | Meaning |', '|---|---|---|', ...rows].join('\n');
const readme = readFileSync('README.md', 'utf8');
const from = readme.indexOf(start);
const to = readme.indexOf(end);
if (from < 0 || to < 0) throw new Error('README.md has no config-table markers');
writeFileSync('README.md', `${readme.slice(0, from + start.length)}\n${table}\n${readme.slice(to)}`);
