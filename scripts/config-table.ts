// Rewrites the configuration table in README.md and the `.env.example` file from the settings declared in src/platform/config/settings/.
import { readFileSync, writeFileSync } from 'node:fs';
import { envExample } from '../src/platform/config/env-example.js';
import { withConfigTable } from '../src/platform/config/readme-table.js';

writeFileSync('README.md', withConfigTable(readFileSync('README.md', 'utf8')));
writeFileSync('.env.example', envExample());
