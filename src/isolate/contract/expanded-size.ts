/**
 * The size of a result as it expands. The value codec (protocol/value-codec.ts) keeps a shared
 * reference as one `["x", id]` node, so `x = [x, x]` done 28 times encodes in a few hundred bytes;
 * but a host that serializes the decoded result (an MCP server stringifies it) writes each shared
 * value out in full, and gigabytes of it. The size here is that of the encoded form with every
 * shared reference written out in full, except one back to a value that encloses it (a cycle,
 * which a serializer cannot write out either), which counts as the reference it is. A value's
 * expanded size is computed once, however often it is shared, so the cost is that of the encoded
 * form, never of its expansion. The result is compared with `limits.maxResultBytes`.
 *
 * The supervisor's bundle imports it (workerd/outcome-frames.ts).
 */

/** Measures an encoded value: the UTF-8 size of its JSON with every shared reference expanded. */
export type ExpandedSizer = (tree: unknown) => number;

export function createExpandedSizer(): ExpandedSizer {
  /** The tags of the nodes that stand for one object, numbered in the order the codec met them. */
  const objectTags = new Set(['a', 'd', 'r', 'm', 's', 'ab', 'v', 'e', 'B', 'o']);
  const encoder = new TextEncoder();

  return (tree) => {
    const objects: unknown[][] = [];
    // The codec numbers objects in depth-first order, a node before what it holds.
    const number = (node: unknown): void => {
      if (!Array.isArray(node)) return;
      if (objectTags.has(node[0] as string)) objects.push(node);
      for (let i = 1; i < node.length; i++) number(node[i]);
    };
    number(tree);
    const sizes = new Map<unknown[], number>();
    const open = new Set<unknown[]>();
    const size = (node: unknown): number => {
      if (typeof node === 'string') return encoder.encode(JSON.stringify(node)).byteLength;
      if (!Array.isArray(node)) return JSON.stringify(node ?? null).length;
      if (node[0] === 'x') {
        const target = objects[node[1] as number];
        if (target !== undefined && !open.has(target)) return size(target);
      }
      const known = sizes.get(node);
      if (known !== undefined) return known;
      open.add(node);
      // The brackets, and a comma between elements.
      let total = 1 + node.length;
      for (const element of node) total += size(element);
      open.delete(node);
      sizes.set(node, total);
      return total;
    };
    return size(tree);
  };
}
