// The page side of agentsdk_threejs: one WebGL renderer, one scene, and the
// functions Python calls through Playwright (window.__agentsdk).
import * as THREE from 'three';
import { GLTFLoader } from 'three/addons/loaders/GLTFLoader.js';
import { OBJLoader } from 'three/addons/loaders/OBJLoader.js';
import { GLTFExporter } from 'three/addons/exporters/GLTFExporter.js';
import { applyOps, OpError } from './ops.js';
import { describeScene, objectBounds, reportUnits } from './units.js';
import { visibilityPass } from './visibility.js';
import { adaptImports, adoptDeclared, compileScene, created, frameStub, HEADER_LINES, sceneThree } from './scene_code.js';

// User code runs as a classic script named scene-code.js; HEADER_LINES lines precede it.
const MAX_LOG = 50;
const MAX_TEXT = 2000;

const state = {
  scene: null,
  retired: null,
  camera: null,
  cameraTarget: new THREE.Vector3(),
  renderer: null,
  notes: [],
  webglError: null,
  vars: {},
  log: [],
  errors: [],
  pendingLoads: 0,
  scriptUrl: null,
};

function locate(stack) {
  if (!stack) return { line: null, column: null };
  const match = String(stack).match(/scene-code\.js:(\d+):(\d+)/);
  if (!match) return { line: null, column: null };
  return { line: Number(match[1]) - HEADER_LINES, column: Number(match[2]) };
}

function format(value) {
  if (value instanceof Error) return `${value.name}: ${value.message}`;
  if (typeof value === 'string') return value;
  try { return JSON.stringify(value); } catch { return String(value); }
}

// Messages name files relative to the server root, never with its token.
const BASE_URL = new URL('../', location.href).href;

function record(list, entry) {
  if (list.length >= MAX_LOG) return;
  entry.text = String(entry.text ?? '').split(BASE_URL).join('').slice(0, MAX_TEXT);
  if (list.some((seen) => seen.kind === entry.kind && seen.text === entry.text && seen.line === entry.line)) return;
  list.push(entry);
}

for (const level of ['log', 'info', 'warn', 'error']) {
  const original = console[level].bind(console);
  console[level] = (...args) => {
    const where = locate(new Error().stack);
    record(state.log, { level: level === 'info' ? 'log' : level, text: args.map(format).join(' '), ...where });
    original(...args);
  };
}

window.addEventListener('error', (event) => {
  const fromScene = state.scriptUrl && event.filename === state.scriptUrl;
  const where = fromScene
    ? { line: event.lineno - HEADER_LINES, column: event.colno }
    : locate(event.error && event.error.stack);
  const kind = event.error instanceof SyntaxError || /SyntaxError/.test(event.message) ? 'syntax' : 'uncaught';
  record(state.errors, { kind, text: event.message, ...where });
});

window.addEventListener('unhandledrejection', (event) => {
  const reason = event.reason;
  record(state.errors, { kind: 'uncaught', text: `Unhandled rejection: ${format(reason)}`, ...locate(reason && reason.stack) });
});

// Count loads that code started without awaiting (e.g. TextureLoader.load) so a
// render waits for them; failures become asset errors.
const manager = THREE.DefaultLoadingManager;
const itemStart = manager.itemStart.bind(manager);
const itemEnd = manager.itemEnd.bind(manager);
const itemError = manager.itemError.bind(manager);
manager.itemStart = (url) => { state.pendingLoads += 1; itemStart(url); };
manager.itemEnd = (url) => { state.pendingLoads = Math.max(0, state.pendingLoads - 1); itemEnd(url); };
manager.itemError = (url) => {
  record(state.errors, { kind: 'asset', text: `could not load ${decodeURI(url)}`, line: null, column: null });
  itemError(url);
};

function newCamera(aspect) {
  const camera = new THREE.PerspectiveCamera(50, aspect, 0.1, 1000);
  camera.position.set(4, 3, 6);
  camera.lookAt(0, 0, 0);
  return camera;
}

function disposeScene(scene) {
  if (!scene) return;
  scene.traverse((object) => {
    if (object.geometry) object.geometry.dispose();
    const materials = Array.isArray(object.material) ? object.material : [object.material];
    for (const material of materials) {
      if (!material) continue;
      for (const value of Object.values(material)) if (value && value.isTexture) value.dispose();
      material.dispose();
    }
  });
}

// The old scene is disposed only after the next render: its shader programs are then
// still alive for new materials with the same parameters (a recompile costs ~10x a render).
function resetScene() {
  disposeScene(state.retired);
  state.retired = state.scene;
  state.scene = new THREE.Scene();
  state.camera = newCamera(1);
  state.cameraTarget = new THREE.Vector3(0, 0, 0);
  state.vars = {};
  if (state.renderer) {
    // Settings scene code may have changed on the shared renderer go back to the defaults.
    state.renderer.setClearColor(0x000000, 1);
    state.renderer.toneMapping = THREE.NoToneMapping;
    state.renderer.toneMappingExposure = 1;
    state.renderer.shadowMap.enabled = false;
  }
}

// The point the camera looks at, kept in step when scene code turned the camera itself.
function syncCameraTarget() {
  const camera = state.camera;
  camera.updateMatrixWorld();
  const forward = camera.getWorldDirection(new THREE.Vector3());
  const toTarget = state.cameraTarget.clone().sub(camera.position);
  const distance = toTarget.length();
  if (distance > 1e-9 && toTarget.normalize().dot(forward) > 0.9999) return;
  state.cameraTarget.copy(camera.position).addScaledVector(forward, Math.max(distance, 1));
}

function createRenderer() {
  try {
    const renderer = new THREE.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
    renderer.setPixelRatio(1);
    document.body.appendChild(renderer.domElement);
    state.renderer = renderer;
  } catch (error) {
    state.webglError = format(error);
  }
}

function rendererInfo() {
  if (!state.renderer) {
    const probe = document.createElement('canvas').getContext('2d');
    return { webgl: false, webgl_version: 0, renderer: probe ? '2d canvas only' : 'none', vendor: '', error: state.webglError };
  }
  const gl = state.renderer.getContext();
  const debug = gl.getExtension('WEBGL_debug_renderer_info');
  return {
    webgl: true,
    webgl_version: typeof WebGL2RenderingContext !== 'undefined' && gl instanceof WebGL2RenderingContext ? 2 : 1,
    renderer: String(gl.getParameter(debug ? debug.UNMASKED_RENDERER_WEBGL : gl.RENDERER)),
    vendor: String(gl.getParameter(debug ? debug.UNMASKED_VENDOR_WEBGL : gl.VENDOR)),
    error: null,
  };
}

function sceneStats() {
  const stats = { objects: 0, meshes: 0, triangles: 0, lights: 0, bbox_min: null, bbox_max: null };
  state.scene.traverse((object) => {
    if (object === state.scene) return;
    stats.objects += 1;
    if (object.isLight) stats.lights += 1;
    if (object.isMesh && object.geometry) {
      stats.meshes += 1;
      const geometry = object.geometry;
      const vertices = geometry.index ? geometry.index.count : (geometry.attributes.position ? geometry.attributes.position.count : 0);
      stats.triangles += Math.floor(vertices / 3) * (object.isInstancedMesh ? object.count : 1);
    }
  });
  const box = new THREE.Box3().setFromObject(state.scene);
  if (!box.isEmpty()) {
    stats.bbox_min = box.min.toArray();
    stats.bbox_max = box.max.toArray();
  }
  return stats;
}

const VIEW_DIRECTIONS = {
  front: [0, 0, 1],
  back: [0, 0, -1],
  side: [1, 0, 0],
  left: [-1, 0, 0],
  top: [0, 1, 0],
  bottom: [0, -1, 0],
  iso: [1, 0.8, 1],
};

function framedCamera(view, aspect) {
  const box = new THREE.Box3().setFromObject(state.scene);
  const sphere = box.isEmpty() ? new THREE.Sphere(new THREE.Vector3(), 1) : box.getBoundingSphere(new THREE.Sphere());
  const radius = Math.max(sphere.radius, 1e-3);
  const fov = 40;
  const halfFov = THREE.MathUtils.degToRad(fov / 2);
  const distance = (radius / Math.sin(Math.min(halfFov, Math.atan(Math.tan(halfFov) * aspect)))) * 1.1;
  const camera = new THREE.PerspectiveCamera(fov, aspect, distance / 100, distance * 10);
  const direction = new THREE.Vector3(...VIEW_DIRECTIONS[view]).normalize();
  camera.position.copy(sphere.center).addScaledVector(direction, distance);
  if (view === 'top' || view === 'bottom') camera.up.set(0, 0, view === 'top' ? -1 : 1);
  camera.lookAt(sphere.center);
  return camera;
}

function frameSummary(width, height) {
  const gl = state.renderer.getContext();
  const pixels = new Uint8Array(width * height * 4);
  gl.readPixels(0, 0, width, height, gl.RGBA, gl.UNSIGNED_BYTE, pixels);
  const low = [255, 255, 255];
  const high = [0, 0, 0];
  for (let i = 0; i < pixels.length; i += 4) {
    for (let c = 0; c < 3; c += 1) {
      const value = pixels[i + c];
      if (value < low[c]) low[c] = value;
      if (value > high[c]) high[c] = value;
    }
  }
  const uniform = low.every((value, c) => high[c] - value <= 2);
  return { uniform, color: [pixels[0], pixels[1], pixels[2]] };
}

function renderViews(views, width, height, visibility = true) {
  const frames = [];
  if (!state.renderer) return frames;
  state.renderer.setSize(width, height);
  const aspect = width / height;
  for (const view of views) {
    let camera;
    if (view === 'camera') {
      camera = state.camera;
      if (camera.isPerspectiveCamera) camera.aspect = aspect;
      camera.updateProjectionMatrix();
    } else {
      camera = framedCamera(view, aspect);
    }
    state.renderer.render(state.scene, camera);
    const summary = frameSummary(width, height);
    const frame = { view, png: state.renderer.domElement.toDataURL('image/png'), ...summary };
    // After the frame is taken: the ID pass draws offscreen and puts everything back.
    if (visibility) frame.visibility = visibilityPass(state.renderer, state.scene, camera, width, height);
    frames.push(frame);
  }
  return frames;
}

async function waitForLoads(deadline) {
  while (state.pendingLoads > 0 && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const loaders = { gltf: new GLTFLoader(), obj: new OBJLoader() };

function asset(path) {
  return new URL('../assets/0/' + String(path).replace(/^\/+/, ''), location.href).href;
}

async function loadModel(url, name) {
  const target = /^[a-z]+:/i.test(url) || url.startsWith('/') || url.startsWith('..') ? url : asset(url);
  const lower = target.toLowerCase().split('?')[0];
  let object;
  try {
    if (lower.endsWith('.gltf') || lower.endsWith('.glb')) {
      object = (await loaders.gltf.loadAsync(target)).scene;
    } else if (lower.endsWith('.obj')) {
      object = await loaders.obj.loadAsync(target);
    } else {
      throw new Error(`unsupported model format (use .gltf, .glb or .obj): ${decodeURI(target).split(BASE_URL).join('')}`);
    }
  } catch (error) {
    const text = format(error);
    if (/404/.test(text)) throw new Error(`asset not found: ${decodeURI(target).split(BASE_URL).join('')}`);
    throw error;
  }
  if (name) object.name = name;
  state.scene.add(object);
  return object;
}

function addon(path) {
  return import('three/addons/' + String(path).replace(/^\/+/, ''));
}

function result(frames, started) {
  disposeScene(state.retired);
  state.retired = null;
  syncCameraTarget();
  return {
    notes: state.notes,
    scene: describeScene(state.scene, state.camera, state.cameraTarget),
    errors: state.errors,
    log: state.log,
    stats: sceneStats(),
    renderer: rendererInfo(),
    frames,
    camera: { type: state.camera.type, position: state.camera.position.toArray() },
    elapsed_ms: performance.now() - started,
  };
}

function begin() {
  state.log = [];
  state.errors = [];
  state.notes = [];
  return performance.now();
}

const SCENE_THREE = sceneThree(() => state.renderer, { GLTFLoader, OBJLoader });

async function runSceneCode(code, deadline) {
  const adapted = adaptImports(code, state.notes);
  const { fn, declared } = await compileScene(adapted, state);
  if (!fn) {
    if (!state.errors.some((error) => error.kind === 'syntax')) {
      record(state.errors, { kind: 'syntax', text: 'the code did not compile', line: null, column: null });
    }
    return false;
  }
  const renderer = state.renderer;
  const frame = frameStub();
  const { render, setAnimationLoop } = renderer || {};
  Object.assign(created, { tracking: true, scenes: [], cameras: [], lastRender: null });
  if (renderer) {
    // Watch which scene and camera the code draws with; its animation loop runs one frame.
    renderer.render = function (scene, camera) { created.lastRender = { scene, camera }; return render.call(this, scene, camera); };
    renderer.setAnimationLoop = (callback) => { if (callback) frame(callback); };
  }
  try {
    const returned = await fn(SCENE_THREE, state.scene, state.camera, state.renderer, loaders, loadModel, asset, addon, state.vars, frame);
    adoptDeclared(declared, state, state.notes, (old) => { state.retired = old; });
    if (returned && returned.camera && returned.camera.isCamera) state.camera = returned.camera;
  } catch (error) {
    record(state.errors, { kind: 'exception', text: format(error), ...locate(error && error.stack) });
  } finally {
    created.tracking = false;
    if (renderer) { renderer.render = render; renderer.setAnimationLoop = setAnimationLoop; }
  }
  await waitForLoads(deadline);
  return true;
}

async function run({ code, reset, width, height, views, timeout_ms, visibility }) {
  const started = begin();
  const deadline = started + timeout_ms;
  if (reset || !state.scene) resetScene();
  if (code && !(await runSceneCode(code, deadline))) return result([], started);
  return result(renderViews(views, width, height, visibility !== false), started);
}

// What the typed operations can change, as text: two equal keys are the same scene to
// them (objects and lights compared by what they are, not by identity, so a light
// replaced by one just like it is no change).
function sceneKey() {
  const rows = [];
  const round = (n) => Math.round(n * 1e4) / 1e4;
  const numbers = (v) => v.toArray().filter((n) => typeof n === 'number').map(round);
  state.scene.traverse((object) => {
    const row = [object.name, object.type, object.visible, numbers(object.position), numbers(object.rotation), numbers(object.scale)];
    if (object.geometry) row.push(object.geometry.type, JSON.stringify(object.geometry.parameters || null));
    const materials = object.material ? (Array.isArray(object.material) ? object.material : [object.material]) : [];
    for (const m of materials) row.push(m.type, m.color ? m.color.getHexString() : null, m.opacity, m.transparent, m.visible);
    if (object.isLight) row.push(object.color.getHexString(), object.intensity, object.target ? numbers(object.target.getWorldPosition(new THREE.Vector3())) : null);
    if (object.userData && object.userData.agentsdk) row.push(JSON.stringify(object.userData.agentsdk));
    rows.push(JSON.stringify(row));
  });
  rows.push(JSON.stringify([numbers(state.camera.position), numbers(state.cameraTarget), state.camera.fov || null, state.camera.zoom]));
  return rows.join('\n');
}

// The typed operations: applied in order; a bad one changes nothing and says why.
// `unchanged`: the operations left the scene as it was (a colour set to the one it had).
async function apply({ ops, reset, width, height, views, visibility }) {
  const started = begin();
  const fresh = reset || !state.scene;
  if (fresh) resetScene();
  syncCameraTarget();
  const before = fresh ? null : sceneKey();
  const ctx = { state, scene: state.scene, aspect: width / height, changes: [], units: () => reportUnits(state.scene) };
  try {
    applyOps(ctx, ops);
  } catch (error) {
    if (!(error instanceof OpError)) throw error;
    return { ...result([], started), op_error: error.message, changes: ctx.changes };
  }
  syncCameraTarget();
  const unchanged = before !== null && ops.length > 0 && sceneKey() === before;
  return { ...result(renderViews(views, width, height, visibility !== false), started), changes: ctx.changes, unchanged };
}

async function load({ url, name, width, height, views, visibility }) {
  const started = begin();
  if (!state.scene) resetScene();
  try {
    await loadModel(url, name);
  } catch (error) {
    record(state.errors, { kind: 'asset', text: format(error), line: null, column: null });
    return result([], started);
  }
  return result(renderViews(views, width, height, visibility !== false), started);
}

const EXPORTABLE_MATERIALS = ['MeshStandardMaterial', 'MeshPhysicalMaterial', 'MeshBasicMaterial', 'MeshLambertMaterial', 'MeshPhongMaterial'];

// GLTFExporter cannot write materials without a colour (MeshNormalMaterial...): export
// those meshes with a plain standard material rather than failing.
function swapUnexportableMaterials() {
  const swapped = [];
  state.scene.traverse((object) => {
    if (!object.isMesh || !object.material) return;
    const materials = Array.isArray(object.material) ? object.material : [object.material];
    if (materials.every((material) => EXPORTABLE_MATERIALS.includes(material.type))) return;
    swapped.push([object, object.material]);
    const replace = (material) => (EXPORTABLE_MATERIALS.includes(material.type) ? material : new THREE.MeshStandardMaterial({ name: material.type }));
    object.material = Array.isArray(object.material) ? object.material.map(replace) : replace(object.material);
  });
  return swapped;
}

async function exportGLB() {
  if (!state.scene) resetScene();
  const swapped = swapUnexportableMaterials();
  let buffer;
  try {
    buffer = await new GLTFExporter().parseAsync(state.scene, { binary: true });
  } catch (error) {
    return { error: format(error).split(BASE_URL).join(''), stats: sceneStats() };
  } finally {
    for (const [object, material] of swapped) object.material = material;
  }
  const bytes = new Uint8Array(buffer);
  let text = '';
  for (let i = 0; i < bytes.length; i += 0x8000) text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return { glb: btoa(text), stats: sceneStats(), replaced_materials: swapped.length };
}

createRenderer();
resetScene();
function bounds({ names }) {
  if (!state.scene) resetScene();
  return objectBounds(state.scene, names);
}

window.__agentsdk = { run, apply, load, exportGLB, bounds, info: rendererInfo, revision: THREE.REVISION, ready: true };
