// Scene code as a model writes it, made to run against the page's scene.
//
// Models trained on three.js tutorials write a whole program: `import * as THREE from
// 'three'`, `const scene = new THREE.Scene()`, `const renderer = new THREE.WebGLRenderer()`,
// an animation loop. Rather than fail on the redeclared names, the page adapts: imports become
// the modules it already has, a name the code declares itself is simply not passed in, the
// code's own `new THREE.WebGLRenderer()` is the page's renderer, and a scene or camera the code
// made (and rendered) becomes the page's scene or camera. Every adaptation is reported.
import * as THREE from 'three';

export const PROVIDED = ['THREE', 'scene', 'camera', 'renderer', 'loaders', 'loadModel', 'asset', 'addon', 'vars', 'requestAnimationFrame'];
const SCENE_URL = 'scene-code.js';
export const HEADER_LINES = 1;

// What the current call created, so a scene or camera the code declared can be adopted.
export const created = { tracking: false, scenes: [], cameras: [], lastRender: null, loops: [] };

class TrackedScene extends THREE.Scene {
  constructor(...args) { super(...args); if (created.tracking) created.scenes.push(this); }
}
class TrackedPerspectiveCamera extends THREE.PerspectiveCamera {
  constructor(...args) { super(...args); if (created.tracking) created.cameras.push(this); }
}
class TrackedOrthographicCamera extends THREE.OrthographicCamera {
  constructor(...args) { super(...args); if (created.tracking) created.cameras.push(this); }
}

export function sceneThree(pageRenderer, legacy = {}) {
  // `new THREE.WebGLRenderer(...)` in scene code hands back the page's renderer: a second
  // WebGL context would draw nowhere we look (and Chromium caps the number of contexts).
  function WebGLRenderer() { return pageRenderer(); }
  WebGLRenderer.prototype = THREE.WebGLRenderer.prototype;
  return Object.freeze({
    // Older tutorials use addons as THREE.GLTFLoader (three's former examples/js scripts).
    ...legacy,
    ...THREE,
    Scene: TrackedScene,
    PerspectiveCamera: TrackedPerspectiveCamera,
    OrthographicCamera: TrackedOrthographicCamera,
    WebGLRenderer,
  });
}

const IMPORT_ALL = /^\s*import\s+\*\s+as\s+([A-Za-z_$][\w$]*)\s+from\s+['"]three['"]\s*;?\s*$/;
const IMPORT_NAMED = /^\s*import\s+\{([^}]*)\}\s+from\s+['"]three(?:\/(?:addons|examples\/jsm)\/([^'"]+))?['"]\s*;?\s*$/;

function destructure(specifiers) {
  return specifiers.split(',').map((s) => s.trim()).filter(Boolean).map((s) => s.replace(/\s+as\s+/, ': ')).join(', ');
}

// Rewrite ES imports of three and its addons line by line (line numbers stay the same).
export function adaptImports(code, notes) {
  const lines = code.split('\n');
  let changed = false;
  const out = lines.map((line) => {
    let match = line.match(IMPORT_ALL);
    if (match) {
      changed = true;
      return match[1] === 'THREE' ? '' : `const ${match[1]} = THREE;`;
    }
    match = line.match(IMPORT_NAMED);
    if (match) {
      changed = true;
      return match[2] ? `const { ${destructure(match[1])} } = await addon(${JSON.stringify(match[2])});` : `const { ${destructure(match[1])} } = THREE;`;
    }
    return line;
  });
  if (changed) notes.push('import lines were turned into the modules the page already has (THREE is given; addons load with addon(path)).');
  return out.join('\n');
}

function compileOnce(code, params, state) {
  return new Promise((resolve) => {
    const source = `window.__agentsdkScene = async function (${params.join(', ')}) {\n` + code + '\n};\n//# sourceURL=' + SCENE_URL + '\n';
    const url = URL.createObjectURL(new Blob([source], { type: 'text/javascript' }));
    state.scriptUrl = url;
    window.__agentsdkScene = undefined;
    const element = document.createElement('script');
    element.src = url;
    const done = () => { element.remove(); URL.revokeObjectURL(url); resolve(window.__agentsdkScene); };
    element.onload = done;
    element.onerror = done;
    document.head.appendChild(element);
  });
}

const REDECLARED = /Identifier '([\w$]+)' has already been declared/;

// Compile; when the only trouble is that the code declares one of the names the page passes
// in, stop passing that name and compile again. Returns the function and the names dropped.
export async function compileScene(code, state) {
  const params = PROVIDED.slice();
  const declared = [];
  for (let attempt = 0; attempt <= PROVIDED.length; attempt += 1) {
    const before = state.errors.length;
    const fn = await compileOnce(code, params, state);
    if (fn) return { fn, declared };
    const fresh = state.errors.slice(before);
    const clash = fresh.length === 1 && fresh[0].kind === 'syntax' ? fresh[0].text.match(REDECLARED) : null;
    const index = clash ? params.indexOf(clash[1]) : -1;
    if (index < 0) return { fn: null, declared };
    state.errors.splice(before); // not the model's mistake: the page made the clash
    declared.push(clash[1]);
    params[index] = `__agentsdk_unused_${index}`;
  }
  return { fn: null, declared };
}

// After the code ran: make a scene/camera the code declared itself the page's own.
export function adoptDeclared(declared, state, notes, retire) {
  const last = created.lastRender;
  if (declared.includes('scene')) {
    const own = (last && last.scene && last.scene.isScene) ? last.scene : created.scenes.find((s) => s.children.length) || created.scenes[0];
    if (own && own !== state.scene) {
      retire(state.scene);
      state.scene = own;
      notes.push('The code made its own `scene`; it is now the page\'s scene (later calls can use `scene` directly).');
    }
  }
  if (declared.includes('camera')) {
    const own = (last && last.camera && last.camera.isCamera) ? last.camera : created.cameras[0];
    if (own && own !== state.camera) {
      state.camera = own;
      notes.push('The code made its own `camera`; the frame is taken with it.');
    }
  }
  if (declared.includes('renderer')) notes.push('The code declared its own `renderer`: `new THREE.WebGLRenderer()` is the page\'s renderer, which draws the frame.');
  const others = declared.filter((name) => !['scene', 'camera', 'renderer'].includes(name));
  if (others.length) notes.push(`The code declared ${others.map((n) => '`' + n + '`').join(', ')} itself, so the page's own ${others.length > 1 ? 'values were' : 'value was'} not passed in.`);
}

// Animation loops do not run: each callback given to requestAnimationFrame or
// setAnimationLoop is called once (so `await new Promise(requestAnimationFrame)` still works).
export function frameStub() {
  const seen = new Set();
  let id = 0;
  return (callback) => {
    id += 1;
    if (typeof callback === 'function' && !seen.has(callback)) {
      seen.add(callback);
      setTimeout(() => { if (created.tracking) callback(performance.now()); }, 0);
    }
    return id;
  };
}
