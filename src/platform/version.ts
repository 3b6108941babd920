// The service version, read once from package.json (found from src/platform/ under tsx and from dist/src/platform/ when built).
import { existsSync, readFileSync } from 'node:fs';

const candidates = ['../../package.json', '../../../package.json'].map((p) => new URL(p, import.meta.url));
const found = candidates.find((url) => existsSync(url));
const pkg = found ? (JSON.parse(readFileSync(found, 'utf8')) as { name?: string; version: string }) : { version: '0.0.0' };
export const version: string = pkg.version;
