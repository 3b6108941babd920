// Rewrites the configuration table in README.md from the settings declared in src/platform/config/settings/.
import { readFileSync, writeFileSync } from 'node:fs';
import { withConfigTable } from '../src/platform/config/readme-table.js';

writeFileSync('README.md', withConfigTable(readFileSync('README.md', 'utf8')));
