// The layering of src/: floors from core (imports nothing of ours) up to the composition root; imports only go down.
// Run by `npm test` (npm run check:layers); test/architecture/layers.test.ts shows it fails on a violation.

/** Each floor and what it may import besides itself (lower floors only). */
const floors = [
  ['core', []],
  ['platform', ['core']],
  ['media', ['core', 'platform']],
  ['events', ['core', 'platform']],
  ['messages', ['core', 'platform', 'media', 'events']],
  ['instances', ['core', 'platform', 'media', 'events', 'messages']],
  ['history', ['core', 'platform', 'media', 'events', 'messages', 'instances']],
  ['groups', ['core', 'platform', 'media', 'events', 'messages', 'instances']],
  ['sinks', ['core', 'platform', 'media', 'events', 'instances']],
  ['connectors', ['core', 'platform', 'media', 'events', 'messages', 'instances']],
];

const floorRules = floors.map(([floor, below]) => ({
  name: `${floor}-imports-only-lower-floors`,
  comment: `src/${floor}/ may import only ${below.length ? below.map((f) => `src/${f}/`).join(', ') : 'nothing else of ours'} (and itself)`,
  severity: 'error',
  from: { path: `^src/${floor}/` },
  to: { path: '^src/', pathNot: `^src/(${[floor, ...below].join('|')})/` },
}));

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'No import cycles anywhere in src/',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    ...floorRules,
    {
      name: 'connector-kinds-apart',
      comment: 'A connector kind imports no other kind: each is one folder, listed in src/connectors/kinds.ts',
      severity: 'error',
      from: { path: '^src/connectors/([^/]+)/' },
      to: { path: '^src/connectors/[^/]+/', pathNot: '^src/connectors/$1/' },
    },
    {
      name: 'sinks-apart',
      comment: 'An event sink imports no other sink (brokers share src/sinks/broker-relay/)',
      severity: 'error',
      from: { path: '^src/sinks/([^/]+)/', pathNot: '^src/sinks/(rabbitmq|nats)/' },
      to: { path: '^src/sinks/[^/]+/', pathNot: '^src/sinks/$1/' },
    },
    {
      name: 'nothing-imports-the-composition-root',
      comment: 'main.ts, app.ts and services.ts assemble the service; nothing below them imports them',
      severity: 'error',
      from: { path: '^src/(core|platform|media|events|messages|instances|history|groups|sinks|connectors)/' },
      to: { path: '^src/(main|app|services)\\.ts$' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|dist)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'], extensions: ['.ts', '.js'] },
  },
};
