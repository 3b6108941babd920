// Hooks shared by the pages: polling while mounted, the hash route, a clock for countdowns.
import { useEffect, useRef, useState } from 'preact/hooks';

/** Runs `task` now and every `everyMs` while mounted (and again when `deps` change); a run never overlaps the last. */
export function usePoll(task: () => Promise<void>, everyMs: number, deps: unknown[] = []): void {
  const latest = useRef(task);
  latest.current = task;
  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const run = async () => {
      try {
        await latest.current();
      } catch {
        // The page shows its own errors; polling goes on.
      }
      if (!stopped) timer = setTimeout(run, everyMs);
    };
    void run();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
    // Restarts only when the caller's deps change.
  }, deps);
}

/** The route in the address's hash (`#/instances/x/settings` → ['instances', 'x', 'settings']). */
export function useRoute(): string[] {
  const read = () =>
    location.hash
      .replace(/^#\/?/, '')
      .split('/')
      .filter(Boolean)
      .map((part) => decodeURIComponent(part));
  const [route, setRoute] = useState(read);
  useEffect(() => {
    const changed = () => setRoute(read());
    window.addEventListener('hashchange', changed);
    return () => window.removeEventListener('hashchange', changed);
  }, []);
  return route;
}

export function go(...parts: string[]): void {
  location.hash = `#/${parts.map(encodeURIComponent).join('/')}`;
}

export function href(...parts: string[]): string {
  return `#/${parts.map(encodeURIComponent).join('/')}`;
}

/** The time now, ticking every second while mounted. */
export function useNow(): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, []);
  return now;
}
