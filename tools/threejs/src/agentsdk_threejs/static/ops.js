// Typed scene operations (the goal-level tools): add / update / remove an object by name,
// lights, camera placement and fit-to-view. Python validates the argument types; this side
// checks what only the scene knows (names, colours) and throws OpError with a hint.
import * as THREE from 'three';
import { OpError, findNamed, num, point } from './names.js';
import { findSupport, overObject, resolveTarget, restOn, worldBox } from './place.js';

export { OpError };

const SHAPE_ALIASES = { cube: 'box', ball: 'sphere', tube: 'cylinder', donut: 'torus', pill: 'capsule', ground: 'plane', floor: 'plane', disc: 'circle', disk: 'circle', pyramid: 'pyramid' };
export const SHAPES = ['box', 'sphere', 'cylinder', 'cone', 'pyramid', 'plane', 'circle', 'torus', 'capsule'];

export function canonicalShape(shape) {
  const key = String(shape || 'box').trim().toLowerCase();
  const canonical = SHAPE_ALIASES[key] || key;
  if (!SHAPES.includes(canonical)) throw new OpError(`unknown shape "${shape}"; use one of: ${SHAPES.join(', ')}`);
  return canonical;
}

const SIZE_OF = { box: '[width, height, depth]', sphere: '[radius]', cylinder: '[radius, height]', cone: '[radius, height]', pyramid: '[radius, height]', plane: '[width, depth]', circle: '[radius]', torus: '[radius, tube]', capsule: '[radius, height]' };

// The names of a shape's size numbers: ['radius', 'height'] for a cylinder.
const sizeParts = (shape) => SIZE_OF[shape].slice(1, -1).split(', ');

const RADIAL = new Set(['cylinder', 'cone', 'pyramid', 'capsule']);

// [r, r, h] for a shape of radius and height: the radius along two axes, then the height, as
// Z-up tools scale a cylinder (a new user's "radius 1 and height 5" came as [1, 1, 5], and
// was made 1 tall when the third number was dropped).
function radiusTwice(shape, given) {
  if (!RADIAL.has(shape) || given.length !== 3) return false;
  const [a, b, c] = given;
  return a === b && c > 0 && c !== a;
}

// More numbers than the shape takes, read as: [r, r, h] (radiusTwice); without its zeros,
// when that leaves as many as the shape takes (a zero is no dimension: a cone's [0.5, 0, 2]
// is radius 0.5, height 2, and a floor's [10, 0, 10] is 10 by 10, as in [w, h, d]); else the
// first ones (a sphere given [r, r, r]). null when the numbers fit the shape as they are.
function extraRead(shape, given, wanted) {
  if (given.length <= wanted) return null;
  if (radiusTwice(shape, given)) return [given[0], given[2]];
  const nonzero = given.filter((v) => v !== 0);
  return nonzero.length === wanted ? nonzero : given.slice(0, wanted);
}

// How a size with more numbers than the shape takes was read, when not as its first numbers:
// for the result, so that the model (and the user) see it.
export function sizeNote(shape, size) {
  if (!Array.isArray(size)) return '';
  const given = size.map(Number);
  const wanted = sizeParts(shape);
  const read = extraRead(shape, given, wanted.length);
  if (read === null || read.every((v, i) => v === given[i])) return '';
  return ` (size ${JSON.stringify(size)} read as ${read.map((v, i) => `${wanted[i]} ${v}`).join(', ')})`;
}

function sizeList(shape, size) {
  const defaults = { box: [1, 1, 1], sphere: [0.5], cylinder: [0.5, 1], cone: [0.5, 1], pyramid: [0.5, 1], plane: [10, 10], circle: [1], torus: [0.5, 0.2], capsule: [0.3, 1] };
  const wanted = defaults[shape];
  if (size === null || size === undefined) return wanted.slice();
  const given = Array.isArray(size) ? size.map(Number) : [Number(size)];
  // One number means "that for every dimension" (a cube, a square floor); more numbers than
  // the shape takes are read by extraRead.
  const values = given.length === 1 ? wanted.map(() => given[0])
    : extraRead(shape, given, wanted.length) ?? given;
  if (values.length < wanted.length) throw new OpError(`a ${shape} needs ${wanted.length} size values: ${SIZE_OF[shape]}; got ${given.length}`);
  if (values.some((v) => !Number.isFinite(v) || v <= 0)) {
    // Say how the numbers were read (a 0.5B model sent a cone [0.5, 0, 2], refused as height
    // 0 until zeros were dropped; a negative number is still refused this way).
    const parts = sizeParts(shape);
    const read = values.map((v, i) => `${parts[i]} ${v}`).join(', ');
    const extra = given.length > wanted.length ? ` (a ${shape} takes ${wanted.length} number${wanted.length > 1 ? 's' : ''})` : '';
    throw new OpError(`a ${shape}'s size is ${SIZE_OF[shape]}, all positive; got ${JSON.stringify(size)}, read as ${read}${extra}`);
  }
  return values;
}

export function makeGeometry(shape, size) {
  const s = sizeList(shape, size);
  switch (shape) {
    case 'box': return new THREE.BoxGeometry(s[0], s[1], s[2]);
    case 'sphere': return new THREE.SphereGeometry(s[0], 48, 24);
    case 'cylinder': return new THREE.CylinderGeometry(s[0], s[0], s[1], 48);
    case 'cone': return new THREE.ConeGeometry(s[0], s[1], 48);
    case 'pyramid': return new THREE.ConeGeometry(s[0], s[1], 4);
    // Planes and circles lie flat (a floor) rather than three's default upright XY plane.
    case 'plane': return new THREE.PlaneGeometry(s[0], s[1]).rotateX(-Math.PI / 2);
    case 'circle': return new THREE.CircleGeometry(s[0], 64).rotateX(-Math.PI / 2);
    case 'torus': return new THREE.TorusGeometry(s[0], s[1], 24, 64);
    case 'capsule': return new THREE.CapsuleGeometry(s[0], Math.max(s[1] - 2 * s[0], 0), 8, 24);
    default: throw new OpError(`unknown shape ${shape}`);
  }
}

export function parseColor(value) {
  const text = String(value ?? '').trim().toLowerCase();
  const compact = text.replace(/[\s_-]+/g, '');
  if (Object.prototype.hasOwnProperty.call(THREE.Color.NAMES, compact)) return new THREE.Color(THREE.Color.NAMES[compact]);
  let hex = compact.replace(/^#|^0x/, '');
  if (/^[0-9a-f]{3}$/.test(hex)) hex = hex.split('').map((c) => c + c).join('');
  if (/^[0-9a-f]{6}$/.test(hex)) return new THREE.Color(parseInt(hex, 16));
  const rgb = text.match(/^rgb\(\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*\)$/);
  if (rgb) return new THREE.Color().setRGB(rgb[1] / 255, rgb[2] / 255, rgb[3] / 255, THREE.SRGBColorSpace);
  throw new OpError(`unknown colour "${value}"; use a name (red, skyblue, darkgreen, grey ...) or hex like #ff8800`);
}

function vector(values, what, length = 3) {
  if (!Array.isArray(values) || values.length !== length || values.some((v) => !Number.isFinite(Number(v)))) {
    throw new OpError(`${what} must be ${length} numbers [x, y, z]; got ${JSON.stringify(values)}`);
  }
  return values.map(Number);
}

function scaleVector(scale) {
  const list = Array.isArray(scale) ? (scale.length === 1 ? [scale[0], scale[0], scale[0]] : scale) : [scale, scale, scale];
  const values = vector(list, 'scale');
  if (values.some((v) => v === 0)) throw new OpError('scale must not be 0 (hide an object with visible=false or remove it)');
  return values;
}

function applyTransform(object, op) {
  if (op.position != null) object.position.fromArray(vector(op.position, 'position'));
  if (op.rotation != null) {
    const degrees = vector(op.rotation, 'rotation (degrees)');
    object.rotation.set(...degrees.map(THREE.MathUtils.degToRad));
  }
  if (op.scale != null) object.scale.fromArray(scaleVector(op.scale));
  if (op.visible != null) object.visible = Boolean(op.visible);
}

function applyMaterial(material, op) {
  if (op.color != null) material.color.copy(parseColor(op.color));
  if (op.opacity != null) {
    const opacity = Number(op.opacity);
    if (!(opacity >= 0 && opacity <= 1)) throw new OpError(`opacity must be between 0 and 1; got ${op.opacity}`);
    material.opacity = opacity;
    material.transparent = opacity < 1;
    material.depthWrite = opacity >= 1;
    material.needsUpdate = true;
  }
}

function dispose(object) {
  object.traverse((child) => {
    if (child.geometry) child.geometry.dispose();
    const materials = Array.isArray(child.material) ? child.material : [child.material];
    for (const material of materials) if (material) material.dispose();
  });
}

function checkName(name) {
  const text = String(name ?? '').trim();
  if (!text) throw new OpError('name must not be empty: every object needs a name to be found later');
  return text;
}

// The add_object call of `op` without its size, written as the model writes a call
// (add_object's other arguments, in its signature's order).
function addCallWithoutSize(op) {
  const kept = ['name', 'shape', 'color', 'position', 'rest_on'].filter((key) => op[key] != null);
  return `add_object(${kept.map((key) => `${key}=${JSON.stringify(op[key])}`).join(', ')})`;
}

function addObject(ctx, op) {
  const name = checkName(op.name);
  const shape = canonicalShape(op.shape);
  const existing = ctx.scene.getObjectByName(name);
  if (existing) {
    // Replacing would silently lose its place and settings: say what is there instead.
    const at = fmt(existing.getWorldPosition(new THREE.Vector3()).toArray());
    throw new OpError(`an object named "${name}" already exists (at (${at})); change it with update_object, or remove_object it first`);
  }
  const support = op.rest_on != null ? findSupport(ctx.scene, null, name, op.rest_on) : undefined;
  const material = new THREE.MeshStandardMaterial({ roughness: 0.6, metalness: 0.0, color: 0xcccccc });
  applyMaterial(material, { color: op.color ?? 'lightgrey', opacity: op.opacity });
  // Flat shapes are seen from both sides (a floor seen from below is still there).
  if (shape === 'plane' || shape === 'circle') material.side = THREE.DoubleSide;
  const mesh = new THREE.Mesh(makeGeometry(shape, op.size), material);
  mesh.name = name;
  mesh.userData.agentsdk = { shape, size: sizeList(shape, op.size) };
  applyTransform(mesh, op);
  ctx.scene.add(mesh);
  const rests = support !== undefined ? `, ${restOn(mesh, support, op.position != null)}` : '';
  ctx.changes.push(`added ${shape} "${name}"${sizeNote(shape, op.size)}${rests}`);
}

// A new object's size, or an error that ends with the call that works without it: told only
// that the size was wrong, the 1.5B model sent the same size again.
function checkNewSize(op) {
  const shape = canonicalShape(op.shape ?? 'box');
  try {
    sizeList(shape, op.size);
  } catch (err) {
    if (!(err instanceof OpError)) throw err;
    const copied = JSON.stringify(op.size) === JSON.stringify(op.position) ? ' (that size is the position written again)' : '';
    throw new OpError(`${err.message}${copied}. Without size it gets the default ${JSON.stringify(sizeList(shape, null))}: ${addCallWithoutSize(op)}`);
  }
}

// Everything that can be wrong with an operation's values is found before anything changes,
// so a bad call leaves the scene as it was.
function validate(op) {
  for (const key of ['position', 'rotation']) if (op[key] != null) vector(op[key], key);
  // look_at and target are a point or an object's name (resolved when the operation runs).
  for (const key of ['target', 'look_at']) if (Array.isArray(op[key])) vector(op[key], key);
  if (op.color != null) parseColor(op.color);
  if (op.ground_color != null) parseColor(op.ground_color);
  if (op.shape != null) canonicalShape(op.shape);
  if (op.size != null && op.op === 'add') checkNewSize(op);
  else if (op.size != null && op.shape != null) sizeList(canonicalShape(op.shape), op.size);
  if (op.scale != null) scaleVector(op.scale);
  if (op.opacity != null && !(Number(op.opacity) >= 0 && Number(op.opacity) <= 1)) throw new OpError(`opacity must be between 0 and 1; got ${op.opacity}`);
  if (op.intensity != null && !(Number(op.intensity) >= 0)) throw new OpError(`intensity must be 0 or more; got ${op.intensity}`);
}

// The object's world extents as the scene lines give them ("size 2x2x2"): 3 significant digits.
function shownExtents(object) {
  return worldBox(object).getSize(new THREE.Vector3()).toArray().map((v) => Number(v.toPrecision(3)));
}

function sameNumbers(a, b) {
  return a.length === b.length && a.every((v, i) => Math.abs(Number(v) - Number(b[i])) < 1e-9);
}

// A size or scale that only repeats the extents the scene lines report, where that would
// change the object: small models echo a part's whole state in an update ("size 2x2x2" sent
// back as size [2, 2, 2] made a sphere of radius 1 a sphere of radius 2, s16/1; a plate "size
// 6x0.2x6" sent back as scale [6, 0.2, 6] became 36 wide). Left out, with a note; the update's
// other fields apply. Returns the operation to apply and the notes.
function withoutEchoes(object, op) {
  if (!object.isMesh || !object.userData.agentsdk || op.shape != null) return [op, []];
  const shown = shownExtents(object);
  const echoes = (value) => Array.isArray(value) && value.length === 3
    && value.every((v, i) => Number(Number(v).toPrecision(3)) === shown[i]);
  const kept = { ...op };
  const notes = [];
  const current = object.userData.agentsdk;
  if (echoes(op.size) && !sameNumbers(sizeList(current.shape, op.size), current.size)) {
    delete kept.size;
    notes.push(`size ${JSON.stringify(op.size)} left out: that is its extent already (its size stays [${current.size.join(', ')}])`);
  }
  if (echoes(op.scale) && !shown.every((v) => v === 1) && !sameNumbers(object.scale.toArray(), op.scale)) {
    delete kept.scale;
    notes.push(`scale ${JSON.stringify(op.scale)} left out: those are its extents, not factors (its scale stays [${object.scale.toArray().map((v) => Number(v.toPrecision(3))).join(', ')}])`);
  }
  return [kept, notes];
}

function updateObject(ctx, given) {
  const object = findNamed(ctx.scene, given.name);
  const [op, echoed] = withoutEchoes(object, given);
  if (op.size != null && op.shape == null && object.userData.agentsdk) sizeList(object.userData.agentsdk.shape, op.size);
  const support = op.rest_on != null ? findSupport(ctx.scene, object, object.name, op.rest_on) : undefined;
  const aim = object.isLight && object.target && op.target != null ? resolveTarget(ctx.scene, op.target, 'target', object) : null;
  if (aim) checkAim(object.getWorldPosition(new THREE.Vector3()), aim);
  const changed = [];
  if (op.new_name != null) {
    const rename = checkName(op.new_name);
    if (rename !== object.name && ctx.scene.getObjectByName(rename)) throw new OpError(`another object is already named "${rename}"`);
    object.name = rename;
    changed.push(`renamed to "${rename}"`);
  }
  if (op.shape != null || op.size != null) {
    if (!object.isMesh) throw new OpError(`"${object.name}" is a ${object.type}, not a simple mesh: its shape and size cannot be set (use scale)`);
    const previous = object.userData.agentsdk || {};
    const shape = canonicalShape(op.shape ?? previous.shape ?? 'box');
    const size = op.size ?? (op.shape == null ? previous.size : null);
    object.geometry.dispose();
    object.geometry = makeGeometry(shape, size);
    object.userData.agentsdk = { shape, size: sizeList(shape, size) };
    changed.push(`${shape} of size [${object.userData.agentsdk.size.join(', ')}]`);
  }
  if (op.color != null || op.opacity != null) {
    const materials = [];
    object.traverse((child) => {
      for (const m of (Array.isArray(child.material) ? child.material : [child.material])) if (m && m.color) materials.push(m);
    });
    if (!materials.length && object.isLight && op.color != null) object.color.copy(parseColor(op.color));
    for (const material of materials) applyMaterial(material, op);
    if (op.color != null) changed.push(`colour ${op.color}`);
    if (op.opacity != null) changed.push(`opacity ${op.opacity}`);
  }
  if (op.intensity != null) {
    if (!object.isLight) throw new OpError(`"${object.name}" is not a light: intensity applies to lights`);
    object.intensity = Number(op.intensity);
    changed.push(`intensity ${op.intensity}`);
  }
  applyTransform(object, op);
  for (const key of ['position', 'rotation', 'scale', 'visible']) if (op[key] != null) changed.push(`${key} ${JSON.stringify(op[key])}`);
  if (aim) {
    setTarget(object, aim.at);
    changed.push(`aimed at ${aim.label}`);
  }
  if (support !== undefined) changed.push(restOn(object, support, op.position != null));
  changed.push(...echoed);
  ctx.changes.push(changed.length ? `updated "${object.name}": ${changed.join(', ')}` : `"${object.name}" unchanged (no fields given)`);
}

function removeObject(ctx, op) {
  const object = findNamed(ctx.scene, op.name);
  (object.parent || ctx.scene).remove(object);
  dispose(object);
  ctx.changes.push(`removed "${object.name}"`);
}

const LIGHT_DEFAULTS = {
  ambient: { intensity: 0.6, position: null },
  hemisphere: { intensity: 1.0, position: [0, 10, 0] },
  directional: { intensity: 2.5, position: [5, 10, 7] },
  point: { intensity: 3, position: [3, 5, 3] },
  spot: { intensity: 4, position: [4, 8, 4] },
};
export const LIGHT_KINDS = Object.keys(LIGHT_DEFAULTS);

function setTarget(light, at) {
  if (!light.target) return;
  light.target.position.copy(at);
  light.target.updateMatrixWorld();
}

// A directional or spot light shines from its position towards its target: the two must differ.
function checkAim(position, aim) {
  if (position.distanceTo(aim.at) < 1e-9) throw new OpError(`the light's target ${aim.label} is where the light stands: aim it at another point or object`);
}

// The name a light gets. Small models pass the name of what the light is for ("tree" for the
// tree's light) and then loop on the refusal; replacing the object would throw it away. So a
// name an object already has becomes "<name> light", and the result says so (the same call
// again finds that light and replaces it).
function lightName(scene, wanted) {
  const holder = scene.getObjectByName(wanted);
  if (!holder || holder.isLight) return { name: wanted, note: '' };
  const other = `${wanted} light`;
  const taken = scene.getObjectByName(other);
  if (taken && !taken.isLight) {
    throw new OpError(`"${wanted}" and "${other}" are objects in the scene, not lights: give the light another name`);
  }
  return { name: other, note: ` (named "${other}": "${wanted}" is an object in the scene)` };
}

function addLight(ctx, op) {
  const kind = String(op.kind || 'directional').toLowerCase().replace(/light$/, '').trim();
  if (!LIGHT_DEFAULTS[kind]) throw new OpError(`unknown light kind "${op.kind}"; use one of: ${LIGHT_KINDS.join(', ')}`);
  const defaults = LIGHT_DEFAULTS[kind];
  const color = parseColor(op.color ?? 'white');
  const intensity = op.intensity ?? defaults.intensity;
  const name = lightName(ctx.scene, checkName(op.name ?? kind));
  const position = new THREE.Vector3().fromArray(op.position != null ? vector(op.position, 'position') : (defaults.position || [0, 0, 0]));
  // Only directional and spot lights have a direction; the others ignore a target.
  const aimed = kind === 'directional' || kind === 'spot';
  // above: over an object's centre, gap above its top (place.js measures its world box).
  // Checked before anything changes. Ambient and hemisphere lights light from no point (a
  // hemisphere light's position is only its sky direction), so above is refused for them.
  let over = null;
  if (op.above != null && String(op.above).trim()) {
    if (!aimed && kind !== 'point') throw new OpError(`above: ${kind === 'ambient' ? 'an' : 'a'} ${kind} light has no position; leave above out, or use a point, spot or directional light`);
    over = overObject(ctx.scene, op.above, op.gap ?? 1, name.name);
    position.copy(over.at);
  }
  // A directional or spot light put over an object and given no target shines down on it.
  const target = op.target ?? (over && aimed ? over.name : null);
  const aim = aimed && target != null ? resolveTarget(ctx.scene, target, 'target', null, name.name) : null;
  const at = aim ? aim.at : new THREE.Vector3();
  // Where above put it, first: "2 above hedge (top y=1): at (0, 3, 0)". above wins over a
  // position given in the same call, and the model is told that position was replaced.
  const where = over ? ` ${over.label}: at ${point(position)}` : '';
  const replaced = over && op.position != null ? `; position [${vector(op.position, 'position').map(num).join(', ')}] replaced by above` : '';
  let placed = '';
  if (aimed && position.distanceTo(at) < 1e-9) {
    // Small models give a new directional or spot light the point it should light as its
    // position too ([0, 0, 0] twice, or the lit object's own centre): it would have no
    // direction. It goes where the kind stands by default, relative to that point.
    position.copy(at).add(new THREE.Vector3(...defaults.position));
    placed = ` (placed at (${fmt(position.toArray())}): its position was its target)`;
  }
  let light;
  if (kind === 'ambient') light = new THREE.AmbientLight(color, intensity);
  else if (kind === 'hemisphere') light = new THREE.HemisphereLight(color, parseColor(op.ground_color ?? '#444444'), intensity);
  else if (kind === 'directional') light = new THREE.DirectionalLight(color, intensity);
  // decay 0: intensity behaves like a directional light's, whatever the distance (easier to pick).
  else if (kind === 'point') light = new THREE.PointLight(color, intensity, 0, 0);
  else light = new THREE.SpotLight(color, intensity, 0, Math.PI / 5, 0.3, 0);
  light.name = name.name;
  if (defaults.position) light.position.copy(position);
  if (light.target) setTarget(light, at);
  const existing = ctx.scene.getObjectByName(light.name);
  const aimedAt = where + (aim ? `${where ? ',' : ''} aimed at ${aim.label}` : '') + placed + replaced + name.note;
  if (existing) {
    (existing.parent || ctx.scene).remove(existing);
    dispose(existing);
    ctx.changes.push(`replaced the existing "${light.name}" with a ${kind} light${aimedAt}`);
  } else {
    ctx.changes.push(`added ${kind} light "${light.name}"${aimedAt}`);
  }
  ctx.scene.add(light);
}

function setCamera(ctx, op) {
  const camera = ctx.state.camera;
  if (op.fov != null) {
    if (!camera.isPerspectiveCamera) throw new OpError('fov applies to a perspective camera; this scene uses an orthographic one');
    if (!(Number(op.fov) > 1 && Number(op.fov) < 179)) throw new OpError(`fov must be between 1 and 179 degrees; got ${op.fov}`);
  }
  const position = op.position != null ? new THREE.Vector3(...vector(op.position, 'position')) : camera.position.clone();
  const aim = op.look_at != null ? resolveTarget(ctx.scene, op.look_at, 'look_at', camera) : null;
  const target = aim ? aim.at : ctx.state.cameraTarget.clone();
  const direction = target.clone().sub(position);
  if (direction.lengthSq() < 1e-12) {
    throw new OpError(aim && !Array.isArray(op.look_at) ? `look_at: ${aim.label} is where the camera stands: give the camera another position` : 'the camera cannot look at its own position: give look_at a different point');
  }
  camera.position.copy(position);
  ctx.state.cameraTarget.copy(target);
  if (op.fov != null) camera.fov = Number(op.fov);
  // Looking straight up or down needs another "up" than +Y.
  const vertical = Math.abs(direction.normalize().y) > 0.999;
  camera.up.set(0, vertical ? 0 : 1, vertical ? (direction.y < 0 ? -1 : 1) : 0);
  camera.lookAt(target);
  camera.updateProjectionMatrix();
  camera.updateMatrixWorld();
  const looking = aim && !Array.isArray(op.look_at) ? aim.label : `(${fmt(ctx.state.cameraTarget.toArray())})`;
  ctx.changes.push(`camera at (${fmt(camera.position.toArray())}) looking at ${looking}`);
}

export const VIEW_DIRECTIONS = {
  front: [0, 0, 1], back: [0, 0, -1], side: [1, 0, 0], right: [1, 0, 0], left: [-1, 0, 0],
  top: [0, 1, 0], bottom: [0, -1, 0], iso: [1, 0.8, 1],
};

// World-space points of an object (every vertex, sampled down for heavy meshes): what it
// really occupies, so framing is tight for spheres and rotated shapes.
export function worldPoints(object, budget = 20000) {
  const points = [];
  object.updateWorldMatrix(true, true);
  object.traverse((child) => {
    if (!child.visible) return;
    const position = child.geometry && child.geometry.attributes && child.geometry.attributes.position;
    if (!position) return;
    const instances = child.isInstancedMesh ? child.count : 1;
    const step = Math.max(1, Math.ceil((position.count * instances) / budget));
    const local = new THREE.Vector3();
    const instance = new THREE.Matrix4();
    for (let k = 0; k < instances; k += 1) {
      const world = child.matrixWorld.clone();
      if (child.isInstancedMesh) { child.getMatrixAt(k, instance); world.multiply(instance); }
      for (let i = 0; i < position.count; i += step) points.push(local.fromBufferAttribute(position, i).applyMatrix4(world).clone());
    }
  });
  return points;
}

function fitView(ctx, op) {
  const { state } = ctx;
  const names = op.names && op.names.length ? op.names : null;
  const targets = names ? names.map((name) => findNamed(ctx.scene, name)) : ctx.units().map((unit) => unit.object);
  const points = targets.flatMap((object) => worldPoints(object));
  if (!points.length) throw new OpError(names ? `nothing with geometry in ${names.join(', ')}` : 'the scene has no objects with geometry to frame');
  const box = new THREE.Box3().setFromPoints(points);
  const center = box.getCenter(new THREE.Vector3());
  const camera = state.camera;
  let back; // unit vector from the centre towards the camera
  if (op.view) {
    if (!VIEW_DIRECTIONS[op.view]) throw new OpError(`unknown view "${op.view}"; use one of: ${Object.keys(VIEW_DIRECTIONS).join(', ')}`);
    back = new THREE.Vector3(...VIEW_DIRECTIONS[op.view]).normalize();
  } else {
    camera.updateMatrixWorld();
    back = camera.getWorldDirection(new THREE.Vector3()).negate(); // keep the current direction
  }
  const margin = op.margin ?? 1.15;
  // Below 1 crops the objects (a close-up), as asked; past 10 is surely a mistake.
  if (!(margin >= 0.5 && margin <= 10)) throw new OpError(`margin must be between 0.5 (a close-up that crops) and 10; got ${op.margin}`);
  // Orient a probe at the centre to get the view's right/up axes, then solve the distance in
  // closed form: every point p must satisfy |x_p| <= tan(half fov) * depth_p / margin.
  const probe = camera.clone();
  probe.up.copy(Math.abs(back.y) > 0.999 ? new THREE.Vector3(0, 0, back.y > 0 ? -1 : 1) : new THREE.Vector3(0, 1, 0));
  probe.position.copy(center).add(back);
  probe.lookAt(center);
  probe.updateMatrixWorld();
  const right = new THREE.Vector3().setFromMatrixColumn(probe.matrixWorld, 0);
  const up = new THREE.Vector3().setFromMatrixColumn(probe.matrixWorld, 1);
  const aspect = ctx.aspect;
  const radius = Math.max(box.getSize(new THREE.Vector3()).length() / 2, 1e-3);
  let distance = 0;
  if (camera.isPerspectiveCamera) {
    const tanY = Math.tan(THREE.MathUtils.degToRad(camera.fov / 2));
    const tanX = tanY * aspect;
    for (const p of points) {
      const offset = p.clone().sub(center);
      const along = offset.dot(back); // towards the camera: closer points need more room
      distance = Math.max(
        distance,
        (Math.abs(offset.dot(right)) * margin) / tanX + along,
        (Math.abs(offset.dot(up)) * margin) / tanY + along,
      );
    }
    distance = Math.max(distance, radius * 0.05 + 1e-3);
  } else {
    let extent = 0;
    for (const p of points) {
      const offset = p.clone().sub(center);
      extent = Math.max(extent, Math.abs(offset.dot(right)) / aspect, Math.abs(offset.dot(up)));
    }
    distance = radius * 4;
    camera.zoom = (camera.top - camera.bottom) / 2 / Math.max(extent * margin, 1e-6);
  }
  camera.up.copy(probe.up);
  camera.position.copy(center).addScaledVector(back, distance);
  state.cameraTarget.copy(center);
  camera.near = Math.min(camera.near, Math.max(distance / 1000, 1e-3));
  camera.far = Math.max(camera.far, distance + radius * 10);
  camera.lookAt(center);
  camera.updateProjectionMatrix();
  camera.updateMatrixWorld();
  ctx.changes.push(`camera moved to (${fmt(camera.position.toArray())}) looking at (${fmt(center.toArray())}) to frame ${names ? names.join(', ') : 'every object'}`);
}

export function fmt(values) {
  return values.map((v) => Number(v.toFixed(2)).toString()).join(', ');
}

const HANDLERS = { add: addObject, update: updateObject, remove: removeObject, light: addLight, camera: setCamera, fit: fitView };

export function applyOps(ctx, ops) {
  for (const op of ops) {
    const handler = HANDLERS[op.op];
    if (!handler) throw new OpError(`unknown operation ${op.op}`);
    validate(op);
    handler(ctx, op);
  }
}
