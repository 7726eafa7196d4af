/**
 * A CPU profile of this process over one stretch of work, through node:inspector (what
 * `node --cpu-prof` records, limited to the stretch that matters), written as a .cpuprofile for
 * Chrome's DevTools and summarized as self time per source file and per function.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { relative } from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export async function profiled<T>(file: string, work: () => Promise<T>): Promise<{ value: T; profile: Profile }> {
  const session = new Session();
  session.connect();
  try {
    await session.post('Profiler.enable');
    await session.post('Profiler.start');
    const value = await work();
    const { profile } = (await session.post('Profiler.stop')) as unknown as { profile: Profile };
    writeFileSync(file, JSON.stringify(profile));
    return { value, profile };
  } finally {
    session.disconnect();
  }
}

/** Where a frame lives: a path under the repository, a Node built-in, or V8's own label. */
function placeOf({ callFrame }: ProfileNode): string {
  const { url, functionName } = callFrame;
  if (!url) return `(${functionName || 'native'})`;
  if (url.startsWith('file://')) return relative(process.cwd(), new URL(url).pathname);
  return url;
}

/** Self time per source file and per function, the largest first, as printable lines. */
export function summarize(profile: Profile, top: number): string[] {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const byFile = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, index) => {
    const node = byId.get(id);
    const us = profile.timeDeltas[index] ?? 0;
    if (!node || node.callFrame.functionName === '(idle)') return;
    total += us;
    const file = placeOf(node);
    byFile.set(file, (byFile.get(file) ?? 0) + us);
    const fn = `${node.callFrame.functionName || '(anonymous)'} ${file}:${node.callFrame.lineNumber + 1}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + us);
  });
  const lines = (map: Map<string, number>) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(
        ([key, us]) =>
          `  ${(us / 1000).toFixed(0).padStart(6)} ms ${((100 * us) / total).toFixed(1).padStart(5)}%  ${key}`,
      );
  return [
    `busy (not idle) ${(total / 1000).toFixed(0)} ms; self time by file:`,
    ...lines(byFile),
    'self time by function:',
    ...lines(byFunction),
  ];
}
