/**
 * The files the workerd binary needs to start: its ELF interpreter (the dynamic loader named in
 * its PT_INTERP header) and the shared libraries that loader resolves for it. A confined member's
 * filesystem view binds exactly these, so they are asked of this machine at run time, never
 * assumed: the loader's own `--list` (what `ldd` runs) names them.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, openSync, readSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { confinementText } from './texts.js';

const PT_INTERP = 3;
const HEADER_BYTES = 64 * 1024;

/** The path in the binary's PT_INTERP program header (64-bit little-endian ELF only). */
function elfInterpreter(binary: string): string {
  const head = Buffer.alloc(HEADER_BYTES);
  const fd = openSync(binary, 'r');
  let read: number;
  try {
    read = readSync(fd, head, 0, HEADER_BYTES, 0);
  } finally {
    closeSync(fd);
  }
  const view = head.subarray(0, read);
  if (view.length < 64 || view.readUInt32BE(0) !== 0x7f454c46) throw new Error(confinementText.notElf(binary));
  if (view[4] !== 2 || view[5] !== 1) throw new Error(confinementText.notElf64LittleEndian(binary));
  const programHeaders = Number(view.readBigUInt64LE(0x20));
  const entrySize = view.readUInt16LE(0x36);
  const entries = view.readUInt16LE(0x38);
  for (let index = 0; index < entries; index += 1) {
    const at = programHeaders + index * entrySize;
    if (at + 40 > view.length) break;
    if (view.readUInt32LE(at) !== PT_INTERP) continue;
    const offset = Number(view.readBigUInt64LE(at + 8));
    const size = Number(view.readBigUInt64LE(at + 32));
    if (offset + size > view.length) break;
    // The path is NUL-terminated inside the segment.
    const path = view
      .subarray(offset, offset + size)
      .toString('latin1')
      .replace(/\0.*$/s, '');
    if (isAbsolute(path)) return path;
  }
  throw new Error(confinementText.noInterpreter(binary));
}

/**
 * One line of the loader's `--list`: `name => /path (0x…)`, `/path (0x…)` for the loader itself,
 * or a virtual object such as `linux-vdso.so.1 (0x…)`, which has no file.
 */
function listedPath(line: string): string | undefined {
  const trimmed = line.trim();
  if (trimmed === '') return undefined;
  if (/=>\s*not found/.test(trimmed)) throw new Error(confinementText.libraryMissing(trimmed));
  const arrow = /=>\s*(\/\S+)\s+\(0x[0-9a-f]+\)$/.exec(trimmed);
  if (arrow) return arrow[1];
  const bare = /^(\/\S+)\s+\(0x[0-9a-f]+\)$/.exec(trimmed);
  return bare?.[1];
}

/** The interpreter and every library it loads for the binary, by the paths the loader opens. */
export function linkedFiles(binary: string): string[] {
  const interpreter = elfInterpreter(binary);
  const listing = execFileSync(interpreter, ['--list', binary], { encoding: 'utf8', env: {}, timeout: 10_000 });
  const files = new Set<string>([interpreter]);
  for (const line of listing.split('\n')) {
    const path = listedPath(line);
    if (path !== undefined) files.add(path);
  }
  return [...files];
}
