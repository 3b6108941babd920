// Summarises a V8 .cpuprofile (from `npm run bench -- --cpu-prof=<dir>`): self time by function and by file or
// package, and inclusive time of Switchboard's own functions (src/).
//
//   npx tsx bench/profile-summary.ts <file.cpuprofile> [top=25]
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

const [file, topArg] = process.argv.slice(2);
if (!file) {
  console.error('usage: tsx bench/profile-summary.ts <file.cpuprofile> [top]');
  process.exit(2);
}
const top = Number(topArg ?? 25);
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;

// Time per sample, from the deltas when present (exact), else spread evenly.
const selfUs = new Map<number, number>();
if (profile.samples && profile.timeDeltas) {
  for (let i = 0; i < profile.samples.length; i++) {
    const delta = profile.timeDeltas[i + 1] ?? 0;
    selfUs.set(profile.samples[i], (selfUs.get(profile.samples[i]) ?? 0) + delta);
  }
} else {
  const hits = profile.nodes.reduce((sum, n) => sum + (n.hitCount ?? 0), 0);
  const each = hits ? (profile.endTime - profile.startTime) / hits : 0;
  for (const n of profile.nodes) selfUs.set(n.id, (n.hitCount ?? 0) * each);
}
const totalUs = [...selfUs.values()].reduce((a, b) => a + b, 0);

function place(url: string): string {
  if (!url) return '(native/vm)';
  const modules = url.lastIndexOf('node_modules/');
  if (modules >= 0) {
    const rest = url.slice(modules + 'node_modules/'.length).split('/');
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
  }
  if (url.startsWith('node:')) return url;
  const src = url.indexOf('/src/');
  if (src >= 0) return url.slice(src + 1);
  return url.replace(/^file:\/\//, '');
}

const label = (n: ProfileNode) =>
  `${n.callFrame.functionName || '(anonymous)'}  ${place(n.callFrame.url)}${n.callFrame.url ? `:${n.callFrame.lineNumber + 1}` : ''}`;

const byFunction = new Map<string, number>();
const byPlace = new Map<string, number>();
for (const node of profile.nodes) {
  const us = selfUs.get(node.id) ?? 0;
  if (!us) continue;
  byFunction.set(label(node), (byFunction.get(label(node)) ?? 0) + us);
  const where = node.callFrame.url ? place(node.callFrame.url) : node.callFrame.functionName || '(native/vm)';
  byPlace.set(where, (byPlace.get(where) ?? 0) + us);
}

// Inclusive time of src/ functions: a node's self time counts once for each distinct src/ function on its stack.
const parent = new Map<number, number>();
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
const nodeById = new Map(profile.nodes.map((n) => [n.id, n]));
const inclusive = new Map<string, number>();
for (const node of profile.nodes) {
  const us = selfUs.get(node.id) ?? 0;
  if (!us) continue;
  const seen = new Set<string>();
  for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
    const n = nodeById.get(id)!;
    if (!n.callFrame.url.includes('/src/')) continue;
    const key = label(n);
    if (seen.has(key)) continue;
    seen.add(key);
    inclusive.set(key, (inclusive.get(key) ?? 0) + us);
  }
}

const print = (title: string, map: Map<string, number>) => {
  console.log(`\n${title}`);
  for (const [key, us] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`${((us / totalUs) * 100).toFixed(1).padStart(6)} %  ${(us / 1000).toFixed(0).padStart(7)} ms  ${key}`);
  }
};

console.log(`${file}: ${(totalUs / 1e6).toFixed(1)} s sampled`);
print('self time by file / package', byPlace);
print('self time by function', byFunction);
print('inclusive time of src/ functions', inclusive);
