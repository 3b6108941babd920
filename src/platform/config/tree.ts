// The settings as a tree shaped like the configuration: its value type, its reading, and its rows in declaration order.
import { Setting, type Env, type ValueOf } from './declare.js';

/** Settings, and groups of settings that become nested objects of the configuration (e.g. `waWeb`). */
export interface SettingTree {
  readonly [key: string]: Setting<unknown> | SettingTree;
}

/** The configuration a tree of settings reads into: each setting replaced by its value. */
export type SettingValues<Tree extends SettingTree> = {
  -readonly [Key in keyof Tree]: Tree[Key] extends Setting<infer Value> ? Value : Tree[Key] extends SettingTree ? SettingValues<Tree[Key]> : never;
};

/** Reads every setting of `tree` from `env`, collecting every problem rather than stopping at the first. */
export function readSettings<Tree extends SettingTree>(tree: Tree, env: Env): { values: SettingValues<Tree>; problems: string[] } {
  const problems: string[] = [];
  const values = new Map<Setting<unknown>, unknown>();
  // Each setting is read once, in declaration order, unless another one asks for it sooner (a default or rule depending on it).
  const settingValue: ValueOf = <T>(setting: Setting<T>): T => {
    if (!values.has(setting)) values.set(setting, setting.read({ env, settingValue, problem: (message) => problems.push(message) }));
    return values.get(setting) as T;
  };
  const readGroup = (group: SettingTree): Record<string, unknown> =>
    Object.fromEntries(Object.entries(group).map(([key, node]) => [key, node instanceof Setting ? settingValue(node) : readGroup(node)]));
  // The walk above mirrors SettingValues key by key; TypeScript cannot follow Object.fromEntries, hence the cast.
  return { values: readGroup(tree) as SettingValues<Tree>, problems };
}

/** Every setting of `tree`, groups flattened, in declaration order. */
export function settingsOf(tree: SettingTree): Setting<unknown>[] {
  return Object.values(tree).flatMap((node) => (node instanceof Setting ? [node] : settingsOf(node)));
}
