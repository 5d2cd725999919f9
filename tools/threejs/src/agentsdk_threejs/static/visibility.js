// The object-ID pass behind the visibility report, and the facts only the scene knows.
//
// The scene is drawn again with the same camera into an offscreen render target, every
// report unit (see units.js) in one flat unlit colour that encodes its number exactly
// (24 bits, linear output, no tone mapping, no antialiasing). Transparent objects do not hide
// what is behind them: they only claim pixels where nothing opaque is drawn (a stencil
// test). Extra passes of the same kind give the pixels of an object drawn alone (occlusion)
// and drawn on a wider image plane (cut off by the frame). Everything the pass changes
// (materials, background, fog, clear colour, render target, instance colours) is put back.
import * as THREE from 'three';
import { isDrawable, reportUnits } from './units.js';

const MAX_WIDE = 512; // largest side of the widened render target (pixels)
const MAX_WIDE_FRAMES = 4; // how many frame sizes past each edge the widened pass looks

// The frame-sized target and buffers are kept between passes of the same size.
let frameBuffers = null;
function buffersFor(width, height) {
  if (!frameBuffers || frameBuffers.width !== width || frameBuffers.height !== height) {
    if (frameBuffers) frameBuffers.target.dispose();
    frameBuffers = {
      width,
      height,
      target: new THREE.WebGLRenderTarget(width, height, { depthBuffer: true, stencilBuffer: true }),
      pixels: new Uint8Array(width * height * 4),
      ids: new Uint32Array(width * height),
    };
  }
  return frameBuffers;
}

// ID materials are reused between passes: disposing them would drop their compiled shader.
const pool = new Map();
function idMaterial(kind, index, original, transparent) {
  const side = original && original.side !== undefined ? original.side : THREE.FrontSide;
  const size = original && original.size !== undefined ? original.size : 1;
  const attenuation = original && original.sizeAttenuation !== undefined ? original.sizeAttenuation : true;
  const key = `${kind}|${side}|${transparent}|${size}|${attenuation}`;
  let list = pool.get(key);
  if (!list) { list = { items: [], used: 0 }; pool.set(key, list); }
  let material = list.items[list.used];
  if (!material) {
    const common = { fog: false, toneMapped: false, blending: THREE.NoBlending };
    if (kind === 'points') material = new THREE.PointsMaterial({ ...common, size, sizeAttenuation: attenuation });
    else if (kind === 'line') material = new THREE.LineBasicMaterial(common);
    else if (kind === 'sprite') material = new THREE.SpriteMaterial(common);
    else material = new THREE.MeshBasicMaterial({ ...common, side });
    // Opaque surfaces mark the stencil; transparent ones draw only where it is unmarked.
    material.stencilWrite = true;
    material.transparent = transparent;
    material.stencilFunc = transparent ? THREE.EqualStencilFunc : THREE.AlwaysStencilFunc;
    material.stencilRef = transparent ? 0 : 1;
    material.stencilZPass = transparent ? THREE.KeepStencilOp : THREE.ReplaceStencilOp;
    list.items.push(material);
  }
  list.used += 1;
  material.visible = true;
  // Low byte in red: a little-endian 32-bit view of the RGBA pixels, masked, is the number.
  material.color.setRGB((index & 255) / 255, ((index >> 8) & 255) / 255, ((index >> 16) & 255) / 255, THREE.LinearSRGBColorSpace);
  return material;
}

function kindOf(object) {
  if (object.isPoints) return 'points';
  if (object.isLine) return 'line';
  if (object.isSprite) return 'sprite';
  return 'mesh';
}

function seeThrough(material) {
  const list = Array.isArray(material) ? material : [material];
  return list.length > 0 && list.every((m) => m && m.transparent && m.opacity < 1);
}

function invisible(material) {
  const list = Array.isArray(material) ? material : [material];
  return list.every((m) => !m || m.visible === false || (m.transparent && m.opacity <= 0));
}

// Rows stay bottom-up as WebGL reads them (Python flips the array, which is free there).
function decode(pixels, ids) {
  const words = new Uint32Array(pixels.buffer, pixels.byteOffset, ids.length);
  for (let i = 0; i < ids.length; i += 1) ids[i] = words[i] & 0xffffff;
}

const CHANNELS = 4; // an alone / widened pass draws up to four units, one per RGBA channel
const hidden = new THREE.MeshBasicMaterial({ visible: false });

// A unit drawn alone into one colour channel: no depth test and MAX blending, so the unit's
// whole silhouette lands in its channel and units in other channels do not disturb it.
const channelPool = new Map();
function channelMaterial(kind, channel, original) {
  const side = original && original.side !== undefined ? original.side : THREE.FrontSide;
  const size = original && original.size !== undefined ? original.size : 1;
  const attenuation = original && original.sizeAttenuation !== undefined ? original.sizeAttenuation : true;
  const key = `${kind}|${channel}|${side}|${size}|${attenuation}`;
  let material = channelPool.get(key);
  if (!material) {
    const common = {
      fog: false, toneMapped: false, depthTest: false, depthWrite: false,
      blending: THREE.CustomBlending, blendEquation: THREE.MaxEquation, blendSrc: THREE.OneFactor, blendDst: THREE.OneFactor,
      color: new THREE.Color().setRGB(channel === 0 ? 1 : 0, channel === 1 ? 1 : 0, channel === 2 ? 1 : 0, THREE.LinearSRGBColorSpace),
      opacity: channel === 3 ? 1 : 0,
    };
    if (kind === 'points') material = new THREE.PointsMaterial({ ...common, size, sizeAttenuation: attenuation });
    else if (kind === 'line') material = new THREE.LineBasicMaterial(common);
    else if (kind === 'sprite') material = new THREE.SpriteMaterial(common);
    else material = new THREE.MeshBasicMaterial({ ...common, side });
    channelPool.set(key, material);
  }
  return material;
}

// Give every drawable its unit's ID material (and remember how to put the originals back).
function prepare(scene, units) {
  const owner = new Map();
  units.forEach((unit, i) => unit.object.traverse((child) => { if (isDrawable(child)) owner.set(child, i + 1); }));
  for (const list of pool.values()) list.used = 0;
  const saved = [];
  const drawables = units.map(() => []);
  scene.traverse((child) => {
    if (!isDrawable(child)) return;
    const index = owner.get(child) || 0;
    const original = child.material;
    const first = Array.isArray(original) ? original[0] : original;
    const skip = !index || invisible(original);
    const material = skip ? hidden : idMaterial(kindOf(child), index, first, seeThrough(original));
    saved.push([child, original, child.instanceColor || null]);
    child.material = material;
    if (child.isInstancedMesh) child.instanceColor = null; // would tint the ID colour
    if (index && !skip) drawables[index - 1].push({ child, kind: kindOf(child), original: first });
  });
  const restore = () => {
    for (const [child, material, instanceColor] of saved) {
      child.material = material;
      if (child.isInstancedMesh) child.instanceColor = instanceColor;
    }
  };
  return { restore, drawables };
}

// Only the given units, each in its channel: [{k, channel}].
function showChannels(drawables, items) {
  for (const list of drawables) for (const d of list) d.child.material = hidden;
  for (const { k, channel } of items) for (const d of drawables[k - 1]) d.child.material = channelMaterial(d.kind, channel, d.original);
}

function drawChannels(ctx, camera, target, items, region) {
  showChannels(ctx.drawables, items);
  ctx.renderer.setRenderTarget(target);
  ctx.renderer.clear(true, true, true);
  ctx.renderer.render(ctx.scene, camera);
  const [x, y, w, h] = region;
  const pixels = new Uint8Array(w * h * 4);
  ctx.renderer.readRenderTargetPixels(target, x, y, w, h, pixels);
  ctx.reads += 1;
  return pixels;
}

// Screen rectangles are [x0, y0, x1, y1] with y down (as the report says); WebGL's rows run
// from the bottom, so a region read is [x, height - 1 - y1, width, height].
function regionOf(rect, height) {
  return [rect[0], height - 1 - rect[3], rect[2] - rect[0] + 1, rect[3] - rect[1] + 1];
}

function unionRect(rects) {
  return rects.reduce((a, b) => [Math.min(a[0], b[0]), Math.min(a[1], b[1]), Math.max(a[2], b[2]), Math.max(a[3], b[3])]);
}

function othersInRect(ids, width, height, rect, k) {
  const [x0, y0, x1, y1] = rect;
  for (let y = y0; y <= y1; y += 1) {
    const row = (height - 1 - y) * width;
    for (let x = x0; x <= x1; x += 1) { const id = ids[row + x]; if (id !== 0 && id !== k) return true; }
  }
  return false;
}

// Screen rectangle (pixels, y down) of a unit's world box, or null when part of it is
// behind the camera (its projection is unbounded). Also says where the box is.
function projectBox(object, camera, width, height) {
  const box = new THREE.Box3().setFromObject(object, true);
  if (box.isEmpty()) return { rect: null, behind: false, outside: true };
  const view = camera.matrixWorldInverse;
  const near = camera.isPerspectiveCamera ? camera.near : -Infinity;
  let behindCount = 0;
  let x0 = Infinity; let y0 = Infinity; let x1 = -Infinity; let y1 = -Infinity;
  const corner = new THREE.Vector3();
  for (let i = 0; i < 8; i += 1) {
    corner.set(i & 1 ? box.max.x : box.min.x, i & 2 ? box.max.y : box.min.y, i & 4 ? box.max.z : box.min.z);
    const depth = -corner.clone().applyMatrix4(view).z;
    if (depth < near) { behindCount += 1; continue; }
    corner.project(camera);
    const px = (corner.x + 1) / 2 * width;
    const py = (1 - corner.y) / 2 * height;
    x0 = Math.min(x0, px); x1 = Math.max(x1, px); y0 = Math.min(y0, py); y1 = Math.max(y1, py);
  }
  const frustum = new THREE.Frustum().setFromProjectionMatrix(new THREE.Matrix4().multiplyMatrices(camera.projectionMatrix, view));
  const outside = !frustum.intersectsBox(box);
  if (behindCount === 8) return { rect: null, behind: true, outside };
  if (behindCount > 0) return { rect: null, behind: false, outside };
  return { rect: [Math.floor(x0), Math.floor(y0), Math.ceil(x1), Math.ceil(y1)], behind: false, outside };
}

function clampRect(rect, width, height) {
  if (!rect) return [0, 0, width - 1, height - 1];
  return [Math.max(0, rect[0]), Math.max(0, rect[1]), Math.min(width - 1, rect[2]), Math.min(height - 1, rect[3])];
}

function overlaps(a, b) {
  return a[0] <= b[2] && b[0] <= a[2] && a[1] <= b[3] && b[1] <= a[3];
}

// Pixels of each occlusion candidate drawn alone. Each pass has four channels; a channel
// holds candidates whose screen rectangles do not overlap (they cannot touch each other's count).
function alonePixels(ctx, candidates) {
  const passes = [];
  for (const item of candidates) {
    let placed = false;
    for (const pass of passes) {
      for (let c = 0; c < CHANNELS && !placed; c += 1) {
        if (pass[c].every((other) => !overlaps(other.rect, item.rect))) { pass[c].push(item); placed = true; }
      }
      if (placed) break;
    }
    if (!placed) passes.push(Array.from({ length: CHANNELS }, (_, c) => (c === 0 ? [item] : [])));
  }
  const result = new Map();
  for (const pass of passes) {
    const items = pass.flatMap((list, channel) => list.map((item) => ({ ...item, channel })));
    const region = unionRect(items.map((item) => item.rect));
    const [rx, ry, rw] = regionOf(region, ctx.height);
    const pixels = drawChannels(ctx, ctx.camera, ctx.target, items, regionOf(region, ctx.height));
    for (const item of items) {
      const [x, y, w, h] = regionOf(item.rect, ctx.height);
      let n = 0;
      for (let row = y - ry; row < y - ry + h; row += 1) {
        for (let col = x - rx; col < x - rx + w; col += 1) if (pixels[(row * rw + col) * 4 + item.channel] > 127) n += 1;
      }
      result.set(item.k, n);
    }
  }
  return result;
}

// Pixels of units on a wider image plane around the frame: the same camera with a view
// offset reaching past the frame edges, at the frame's scale or (for huge extents) coarser.
// Inside the frame the exact alone count is used; outside, the widened count scaled back.
let wideTarget = null;
function unclippedPixels(ctx, items) {
  const { width, height } = ctx;
  const rect = unionRect(items.map((item) => item.rect));
  const x0 = Math.max(Math.min(rect[0], 0), -MAX_WIDE_FRAMES * width);
  const y0 = Math.max(Math.min(rect[1], 0), -MAX_WIDE_FRAMES * height);
  const x1 = Math.min(Math.max(rect[2] + 1, width), (MAX_WIDE_FRAMES + 1) * width);
  const y1 = Math.min(Math.max(rect[3] + 1, height), (MAX_WIDE_FRAMES + 1) * height);
  const scale = Math.min(1, MAX_WIDE / Math.max(x1 - x0, y1 - y0));
  const size = [Math.max(1, Math.round((x1 - x0) * scale)), Math.max(1, Math.round((y1 - y0) * scale))];
  const camera = ctx.camera.clone();
  camera.setViewOffset(width, height, x0, y0, x1 - x0, y1 - y0);
  camera.updateProjectionMatrix();
  if (!wideTarget) wideTarget = new THREE.WebGLRenderTarget(size[0], size[1], { depthBuffer: true, stencilBuffer: true });
  wideTarget.setSize(size[0], size[1]);
  const pixels = drawChannels(ctx, camera, wideTarget, items, [0, 0, size[0], size[1]]);
  const outside = items.map(() => 0);
  const sides = items.map(() => new Set());
  for (let row = 0; row < size[1]; row += 1) {
    const fy = y1 - (row + 0.5) / scale; // rows are bottom-up
    for (let col = 0; col < size[0]; col += 1) {
      const fx = x0 + (col + 0.5) / scale;
      if (fx >= 0 && fx < width && fy >= 0 && fy < height) continue;
      const base = (row * size[0] + col) * 4;
      items.forEach((item, i) => {
        if (pixels[base + item.channel] <= 127) return;
        outside[i] += 1;
        if (fx < 0) sides[i].add('left');
        if (fx >= width) sides[i].add('right');
        if (fy < 0) sides[i].add('top');
        if (fy >= height) sides[i].add('bottom');
      });
    }
  }
  return items.map((item, i) => ({
    k: item.k,
    pixels: item.alone + Math.round(outside[i] / (scale * scale)),
    sides: ['left', 'right', 'top', 'bottom'].filter((side) => sides[i].has(side)),
  }));
}

// Run-length encoded ids ([value, length] pairs as 32-bit words): a frame of a few objects
// is a few thousand runs, not a quarter of a million numbers.
function runLengths(ids) {
  const runs = [];
  let value = ids[0];
  let length = 0;
  for (let i = 0; i < ids.length; i += 1) {
    if (ids[i] === value) { length += 1; continue; }
    runs.push(value, length);
    value = ids[i];
    length = 1;
  }
  runs.push(value, length);
  const bytes = new Uint8Array(Uint32Array.from(runs).buffer);
  let text = '';
  for (let i = 0; i < bytes.length; i += 0x8000) text += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
  return btoa(text);
}

export function visibilityPass(renderer, scene, camera, width, height) {
  const started = performance.now();
  const units = reportUnits(scene);
  const saved = {
    target: renderer.getRenderTarget(),
    clear: renderer.getClearColor(new THREE.Color()),
    alpha: renderer.getClearAlpha(),
    background: scene.background,
    fog: scene.fog,
    override: scene.overrideMaterial,
    autoClear: renderer.autoClear,
  };
  const { target, pixels, ids } = buffersFor(width, height);
  const prepared = prepare(scene, units);
  const ctx = { renderer, scene, camera, target, width, height, drawables: prepared.drawables, reads: 1 };
  try {
    scene.background = null;
    scene.fog = null;
    scene.overrideMaterial = null;
    renderer.autoClear = true;
    renderer.setClearColor(0x000000, 0);
    camera.updateMatrixWorld();
    renderer.setRenderTarget(target);
    renderer.clear(true, true, true);
    renderer.render(scene, camera);
    renderer.readRenderTargetPixels(target, 0, 0, width, height, pixels);
    decode(pixels, ids);
    const counts = new Uint32Array(units.length + 1);
    for (let i = 0; i < ids.length; i += 1) counts[ids[i]] += 1;
    const projected = units.map((unit) => projectBox(unit.object, camera, width, height));
    const candidates = [];
    units.forEach((unit, i) => {
      const k = i + 1;
      const where = projected[i];
      // Nothing else inside its screen rectangle: nothing hides it. A unit with no pixel
      // that is in view may be fully hidden: the alone pass tells.
      const inView = counts[k] > 0 || (!where.behind && !where.outside);
      const rect = clampRect(where.rect, width, height);
      if (inView && rect[0] <= rect[2] && rect[1] <= rect[3] && othersInRect(ids, width, height, rect, k)) candidates.push({ k, rect });
    });
    const alone = alonePixels(ctx, candidates);
    const facts = units.map((unit, i) => {
      const k = i + 1;
      const where = projected[i];
      const fact = { name: unit.name, behind_camera: false, outside_frustum: false, cut_sides: [] };
      fact.pixels_alone = alone.has(k) ? alone.get(k) : counts[k];
      if (counts[k] === 0 && fact.pixels_alone === 0) {
        fact.behind_camera = where.behind;
        fact.outside_frustum = !where.behind && where.outside;
      }
      return fact;
    });
    // Units reaching past an edge get a widened pass (four to a pass); a unit partly behind
    // the camera has an unbounded projection, so its cut-off stays unknown.
    const cut = [];
    facts.forEach((fact, i) => {
      const rect = projected[i].rect;
      if (fact.pixels_alone === 0) return;
      if (rect === null) { fact.pixels_unclipped = null; return; }
      if (rect[0] < 0 || rect[1] < 0 || rect[2] >= width || rect[3] >= height) cut.push({ k: i + 1, rect, alone: fact.pixels_alone });
      else fact.pixels_unclipped = fact.pixels_alone;
    });
    for (let start = 0; start < cut.length; start += CHANNELS) {
      const items = cut.slice(start, start + CHANNELS).map((item, channel) => ({ ...item, channel }));
      for (const wide of unclippedPixels(ctx, items)) {
        const fact = facts[wide.k - 1];
        fact.pixels_unclipped = wide.pixels;
        fact.cut_sides = wide.sides;
      }
    }
    return { names: units.map((unit) => unit.name), runs: runLengths(ids), width, height, facts, reads: ctx.reads, ms: performance.now() - started };
  } finally {
    prepared.restore();
    scene.background = saved.background;
    scene.fog = saved.fog;
    scene.overrideMaterial = saved.override;
    renderer.autoClear = saved.autoClear;
    renderer.setClearColor(saved.clear, saved.alpha);
    renderer.setRenderTarget(saved.target);
  }
}
