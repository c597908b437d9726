// A layered layout of a DAG for drawing: longest-path layering from the
// roots, then the nodes of each layer ordered to reduce edge crossings by
// barycenter sweeps. Pure, so that the graph component only draws.

// DagNode is a node as the layout needs it: its key and its parents' keys.
export type DagNode = { key: string; dependsOn: readonly string[] };

// Layout places each node: layer is its column (0 for the roots, else one
// more than its deepest parent), order its place within the layer.
export type Layout = {
  layers: string[][];
  place: Map<string, { layer: number; order: number }>;
  // edges are parent -> child pairs between known keys.
  edges: [string, string][];
};

// layerOf assigns each node its longest-path layer. Nodes in a cycle (an
// editor's DAG may have one until it is fixed) never become ready: they go
// in one layer after the others, so the layout still ends.
function layerOf(nodes: readonly DagNode[], edges: [string, string][]): Map<string, number> {
  const keys = new Set(nodes.map((n) => n.key));
  const waiting = new Map(nodes.map((n) => [n.key, 0]));
  const children = new Map<string, string[]>(nodes.map((n) => [n.key, []]));
  for (const [p, c] of edges) {
    children.get(p)!.push(c);
    waiting.set(c, waiting.get(c)! + 1);
  }
  const layer = new Map<string, number>();
  const ready = nodes.filter((n) => waiting.get(n.key) === 0).map((n) => n.key);
  for (const k of ready) layer.set(k, 0);
  while (ready.length > 0) {
    const k = ready.shift()!;
    for (const c of children.get(k)!) {
      layer.set(c, Math.max(layer.get(c) ?? 0, layer.get(k)! + 1));
      const w = waiting.get(c)! - 1;
      waiting.set(c, w);
      if (w === 0) ready.push(c);
    }
  }
  const after = Math.max(-1, ...layer.values()) + 1;
  for (const k of keys) if (!layer.has(k) || waiting.get(k)! > 0) layer.set(k, after);
  return layer;
}

// crossings counts the pairs of edges that cross, each edge drawn straight
// between its ends' places (layer, order normalised to the layer's size).
// Only edges over the same span of layers are compared: a simple measure,
// exact for edges between neighbouring layers.
export function crossings(l: Layout): number {
  const at = (k: string) => {
    const p = l.place.get(k)!;
    return (p.order + 0.5) / l.layers[p.layer].length;
  };
  const spans = new Map<string, number[][]>();
  for (const [a, b] of l.edges) {
    const span = `${l.place.get(a)!.layer}-${l.place.get(b)!.layer}`;
    if (!spans.has(span)) spans.set(span, []);
    spans.get(span)!.push([at(a), at(b)]);
  }
  let n = 0;
  for (const segs of spans.values()) {
    for (let i = 0; i < segs.length; i++) {
      for (let j = i + 1; j < segs.length; j++) {
        if ((segs[i][0] - segs[j][0]) * (segs[i][1] - segs[j][1]) < 0) n++;
      }
    }
  }
  return n;
}

// layout lays nodes out in layers, ordered by a few barycenter sweeps
// (down by parents, up by children), keeping the order with the fewest
// crossings. Dependencies on unknown keys are left out.
export function layout(nodes: readonly DagNode[]): Layout {
  const keys = new Set(nodes.map((n) => n.key));
  const edges: [string, string][] = [];
  for (const n of nodes) for (const p of new Set(n.dependsOn)) if (keys.has(p) && p !== n.key) edges.push([p, n.key]);
  const layerMap = layerOf(nodes, edges);
  const layers: string[][] = [];
  for (const n of nodes) {
    const i = layerMap.get(n.key)!;
    while (layers.length <= i) layers.push([]);
    layers[i].push(n.key);
  }
  const parents = new Map<string, string[]>(nodes.map((n) => [n.key, []]));
  const children = new Map<string, string[]>(nodes.map((n) => [n.key, []]));
  for (const [p, c] of edges) {
    parents.get(c)!.push(p);
    children.get(p)!.push(c);
  }
  const place = new Map<string, { layer: number; order: number }>();
  const setPlaces = (ls: string[][]) => ls.forEach((layer, li) => layer.forEach((k, o) => place.set(k, { layer: li, order: o })));
  setPlaces(layers);
  // at is a node's place as a fraction of its layer's height, so that
  // layers of different sizes compare.
  const at = (k: string) => (place.get(k)!.order + 0.5) / layers[place.get(k)!.layer].length;
  const sortBy = (li: number, near: Map<string, string[]>) => {
    const bary = new Map(layers[li].map((k) => {
      const ns = near.get(k)!;
      return [k, ns.length ? ns.reduce((s, x) => s + at(x), 0) / ns.length : at(k)];
    }));
    // A stable sort: ties keep their order.
    layers[li].sort((a, b) => bary.get(a)! - bary.get(b)!);
    layers[li].forEach((k, o) => place.set(k, { layer: li, order: o }));
  };
  let best = layers.map((l) => [...l]);
  let fewest = crossings({ layers, place, edges });
  for (let sweep = 0; sweep < 4 && fewest > 0; sweep++) {
    for (let li = 1; li < layers.length; li++) sortBy(li, parents);
    for (let li = layers.length - 2; li >= 0; li--) sortBy(li, children);
    const n = crossings({ layers, place, edges });
    if (n < fewest) {
      fewest = n;
      best = layers.map((l) => [...l]);
    }
  }
  setPlaces(best);
  return { layers: best, place, edges };
}
