/** Every text the surface inventory composes. */

export function probeFailed(side: string, outcome: unknown): string {
  return `The surface probe did not return a record on ${side}; its outcome was ${JSON.stringify(outcome)}`;
}

export function tableMissing(path: string, cause: string): string {
  return `The recorded surface table ${path} could not be read (${cause}); run \`npx tsx harness/surface/record.ts\``;
}

export function tableLacksSide(path: string, side: string): string {
  return `The recorded surface table ${path} holds no measurement for ${side}; run \`npx tsx harness/surface/record.ts --side ${side}\``;
}

export function unknownSide(value: string, sides: readonly string[]): string {
  return `Unknown surface side "${value}"; the sides are ${sides.join(', ')}`;
}

export const UNEXPLAINED = 'UNEXPLAINED: add a reason to harness/surface/reasons.ts and re-record';

export function docOutOfDate(path: string): string {
  return `${path} does not list the recorded differences as the table has them; run \`npx tsx harness/surface/record.ts --doc-only\``;
}

export function docMarkersMissing(path: string, start: string, end: string): string {
  return `${path} lacks the markers ${start} and ${end} that enclose the generated list of differences`;
}
