/**
 * PNG text chunks (`tEXt`, ISO 8859-1 key and value): docs/report.png records which snapshot it
 * shows, so a test can tell when the picture is older than the snapshot. Node-only.
 */
import { crc32 } from 'node:zlib';
import { reportTexts } from './texts.js';

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

interface Chunk {
  type: string;
  data: Buffer;
  /** Where the chunk starts (its length field). */
  offset: number;
}

function chunksOf(png: Buffer): Chunk[] {
  if (png.length < SIGNATURE.length || !png.subarray(0, SIGNATURE.length).equals(SIGNATURE))
    throw new Error(reportTexts.notPng);
  const chunks: Chunk[] = [];
  for (let offset = SIGNATURE.length; offset + 12 <= png.length; ) {
    const length = png.readUInt32BE(offset);
    const type = png.toString('latin1', offset + 4, offset + 8);
    chunks.push({ type, data: png.subarray(offset + 8, offset + 8 + length), offset });
    offset += 12 + length;
  }
  return chunks;
}

/** The PNG with a `tEXt` chunk `key`=`value` inserted before its end. */
export function withPngText(png: Buffer, key: string, value: string): Buffer {
  const end = chunksOf(png).find((chunk) => chunk.type === 'IEND');
  if (!end) throw new Error(reportTexts.pngWithoutEnd);
  const body = Buffer.concat([Buffer.from('tEXt', 'latin1'), Buffer.from(`${key}\0${value}`, 'latin1')]);
  const chunk = Buffer.alloc(body.length + 8);
  chunk.writeUInt32BE(body.length - 4, 0);
  body.copy(chunk, 4);
  chunk.writeUInt32BE(crc32(body), body.length + 4);
  return Buffer.concat([png.subarray(0, end.offset), chunk, png.subarray(end.offset)]);
}

/** Every `tEXt` chunk of the PNG, key → value. */
export function pngTexts(png: Buffer): Record<string, string> {
  const texts: Record<string, string> = {};
  for (const chunk of chunksOf(png)) {
    if (chunk.type !== 'tEXt') continue;
    const text = chunk.data.toString('latin1');
    const split = text.indexOf('\0');
    if (split > 0) texts[text.slice(0, split)] = text.slice(split + 1);
  }
  return texts;
}
