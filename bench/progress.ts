/** Progress lines while the benchmark runs: each phase as it starts and as it finishes. */

const started = performance.now();

function clock(): string {
  return `[${((performance.now() - started) / 1000).toFixed(1).padStart(6)} s]`;
}

export function note(text: string): void {
  console.log(`${clock()}   ${text}`);
}

export async function phase<T>(title: string, work: () => Promise<T>): Promise<T> {
  console.log(`${clock()} > ${title}`);
  const start = performance.now();
  try {
    const result = await work();
    console.log(`${clock()} < ${title}: done in ${((performance.now() - start) / 1000).toFixed(1)} s`);
    return result;
  } catch (error) {
    console.log(`${clock()} ! ${title}: failed after ${((performance.now() - start) / 1000).toFixed(1)} s`);
    throw error;
  }
}
