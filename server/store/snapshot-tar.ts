// The snapshot's tarball, entry by entry. PostgreSQL (and PGlite) take a directory holding
// `PG_VERSION` for a cluster; PGlite's dump puts that file among the last entries but not last, so
// a first start killed while it writes the snapshot into a new data directory could leave a
// "cluster" without its configuration files, refused at every later start. The writer moves
// `PG_VERSION` to the very end: an interrupted directory then has no PG_VERSION, and the next start
// writes the snapshot again over it.
// PGlite's dump is plain ustar (file and directory entries: a 512-byte header, then the data padded
// to 512 bytes), so it is read here by hand: no tar library is among the package's dependencies,
// and this is all the format this needs.
const BLOCK = 512;

export interface TarEntry {
  /** The path as the header has it (`/PG_VERSION`, `/base/5/1259`, ...). */
  path: string;
  /** `0` a file, `5` a directory, ... */
  type: string;
  /** The header and the padded data: the entry's bytes in the archive. */
  bytes: Uint8Array;
  /** The file's content. */
  data: Uint8Array;
}

const text = new TextDecoder();
const field = (header: Uint8Array, offset: number, length: number) => text.decode(header.subarray(offset, offset + length)).replace(/\0.*$/s, '');

/** The entries of a tar archive, in order, up to its end blocks. */
export function tarEntries(tar: Uint8Array): TarEntry[] {
  const entries: TarEntry[] = [];
  for (let at = 0; at + BLOCK <= tar.length; ) {
    const header = tar.subarray(at, at + BLOCK);
    if (header.every((byte) => byte === 0)) break;
    const size = parseInt(field(header, 124, 12).trim() || '0', 8);
    const prefix = field(header, 345, 155);
    const name = field(header, 0, 100);
    const end = at + BLOCK + Math.ceil(size / BLOCK) * BLOCK;
    if (!Number.isInteger(size) || end > tar.length) throw new Error(`Truncated or unreadable tar entry at byte ${at}`);
    entries.push({ path: prefix ? `${prefix}/${name}` : name, type: String.fromCharCode(header[156] || 48), bytes: tar.subarray(at, end), data: tar.subarray(at + BLOCK, at + BLOCK + size) });
    at = end;
  }
  return entries;
}

/** Whether an entry is the cluster's own `PG_VERSION` (not a database directory's). */
export const isClusterMarker = (entry: TarEntry) => entry.path.replace(/^\.?\//, '') === 'PG_VERSION';

/**
 * Whether the archive is whole, as clusterMarkerLast wrote it: every entry readable, the cluster's
 * `PG_VERSION` last, then the two end blocks. A file cut short (a build rewriting it, a full disk)
 * is not.
 */
export function isWholeSnapshot(tar: Uint8Array): boolean {
  let entries: TarEntry[];
  try {
    entries = tarEntries(tar);
  } catch {
    return false;
  }
  const last = entries.at(-1);
  if (!last || !isClusterMarker(last)) return false;
  const end = last.bytes.byteOffset - tar.byteOffset + last.bytes.byteLength;
  return end + 2 * BLOCK <= tar.length && tar.subarray(end, end + 2 * BLOCK).every((byte) => byte === 0);
}

/** A WAL segment file (`/pg_wal/000000010000000000000009`), not pg_wal's subdirectories. */
const WAL_SEGMENT = /^\.?\/?pg_wal\/([0-9A-F]{24})$/;

/**
 * The archive with the cluster's `PG_VERSION` as its last entry, then the two end blocks; of its
 * WAL segments only those `keepWal` accepts (all when it is not given).
 */
export function clusterMarkerLast(tar: Uint8Array, keepWal: (segment: string) => boolean = () => true): Uint8Array {
  const entries = tarEntries(tar).filter((e) => {
    const segment = WAL_SEGMENT.exec(e.path)?.[1];
    return segment === undefined || keepWal(segment);
  });
  const marker = entries.find(isClusterMarker);
  if (!marker) throw new Error('The dump has no PG_VERSION: not a PostgreSQL cluster');
  const ordered = [...entries.filter((e) => e !== marker), marker].map((e) => e.bytes);
  return Buffer.concat([...ordered, new Uint8Array(2 * BLOCK)]);
}
