// Self time of a V8 CPU profile (node --cpu-prof) by function and by file, optionally only from `--from` ms after the
// profile started (e.g. the start of the load printed by bench/fleet-cpu-per-send.ts) for `--for` ms, optionally only
// the samples with a frame `--under=<function name>` on their stack.
//
//   npx tsx bench/cpu-profile-summary.ts /tmp/prof/CPU.*.cpuprofile --from=25000 --for=10000 --top=40
import { readFileSync } from 'node:fs';
import { benchArg } from './lib-bench.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

let file = '';
let fromMs = 0;
let forMs = Number.POSITIVE_INFINITY;
let top = 40;
let under = '';
for (const arg of process.argv.slice(2)) {
  if (!arg.startsWith('--')) {
    file = arg;
    continue;
  }
  const parsed = benchArg(arg);
  if (parsed.name === 'from') fromMs = Number(parsed.value);
  else if (parsed.name === 'for') forMs = parsed.num();
  else if (parsed.name === 'top') top = parsed.num();
  else if (parsed.name === 'under') under = parsed.value;
  else throw new Error(`unknown argument ${arg}`);
}
if (!file) throw new Error('usage: cpu-profile-summary.ts <file.cpuprofile> [--from=<ms>] [--for=<ms>] [--top=<n>]');

const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const parentOf = new Map<number, number>();
for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);

/** Whether a frame named `name` (function name, or `name file`) is on the sample's stack. */
function stackHas(id: number, name: string): boolean {
  for (let at: number | undefined = id; at !== undefined; at = parentOf.get(at)) {
    const frame = byId.get(at)?.callFrame;
    if (frame && (frame.functionName === name || `${frame.functionName} ${frame.url}`.includes(name))) return true;
  }
  return false;
}

const selfUs = new Map<number, number>();
let elapsedUs = 0;
let totalUs = 0;
for (let i = 0; i < profile.samples.length; i++) {
  const delta = profile.timeDeltas[i] ?? 0;
  elapsedUs += delta;
  const atMs = elapsedUs / 1000;
  if (atMs < fromMs || atMs > fromMs + forMs) continue;
  if (under && !stackHas(profile.samples[i], under)) continue;
  const next = profile.timeDeltas[i + 1] ?? delta;
  selfUs.set(profile.samples[i], (selfUs.get(profile.samples[i]) ?? 0) + next);
  totalUs += next;
}

const shortUrl = (url: string) => url.replace(/^file:\/\/.*?\/(node_modules|src)\//, '$1/').replace(/^node:/, 'node:');
const add = (map: Map<string, number>, key: string, us: number) => map.set(key, (map.get(key) ?? 0) + us);
const byFunction = new Map<string, number>();
const byFile = new Map<string, number>();
const byPackage = new Map<string, number>();
const inclusive = new Map<string, number>();
for (const [id, us] of selfUs) {
  const node = byId.get(id);
  if (!node) continue;
  const { functionName, url, lineNumber } = node.callFrame;
  const where = shortUrl(url);
  add(byFunction, `${functionName || '(anonymous)'} ${where}:${lineNumber + 1}`, us);
  add(byFile, where || '(native)', us);
  const pkg =
    /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(where)?.[1] ?? (where.startsWith('src/') ? where.split('/').slice(0, 3).join('/') : where || functionName);
  add(byPackage, pkg, us);
  // Inclusive time of our own modules: each src/ file once per sample stack.
  const seen = new Set<string>();
  for (let at: number | undefined = id; at !== undefined; at = parentOf.get(at)) {
    const frame = byId.get(at)?.callFrame;
    if (!frame) break;
    const key = `${frame.functionName || '(anonymous)'} ${shortUrl(frame.url)}:${frame.lineNumber + 1}`;
    if (!frame.url.includes('/src/') || seen.has(key)) continue;
    seen.add(key);
    add(inclusive, key, us);
  }
}

const print = (title: string, map: Map<string, number>) => {
  console.log(`\n${title}`);
  for (const [key, us] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top))
    console.log(`${((us / totalUs) * 100).toFixed(1).padStart(5)} %  ${(us / 1000).toFixed(0).padStart(6)} ms  ${key}`);
};
console.log(`${(totalUs / 1000).toFixed(0)} ms sampled`);
print('self time by package / folder', byPackage);
print('self time by function', byFunction);
print('self time by file', byFile);
print('inclusive time of src/ functions', inclusive);
