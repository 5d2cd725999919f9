// Goal-level placement, so a small model never does the arithmetic: rest_on ("ground" or
// another object's top) and aiming at an object by name. Both measure world-space geometry
// with Box3.setFromObject(object, true): every vertex through its world matrix, so rotation,
// scale, parents, skinning and morph targets count.
import * as THREE from 'three';
import { OpError, listNames, num, point } from './names.js';
import { hasDrawable } from './units.js';

export function worldBox(object) {
  object.updateWorldMatrix(true, true);
  return new THREE.Box3().setFromObject(object, true);
}

function hasGeometry(object) {
  return hasDrawable(object) && !worldBox(object).isEmpty();
}

function kindOf(object) {
  if (object.isLight) return 'a light';
  if (object.isCamera) return 'a camera';
  return `a ${object.type} with nothing to draw`;
}

function within(object, ancestor) {
  for (let node = object; node; node = node.parent) if (node === ancestor) return true;
  return false;
}

// The one named object whose name is `text` in another letter case ("floor" for Floor).
function inAnyCase(scene, text) {
  const same = [];
  scene.traverse((o) => { if (o.name && o.name.toLowerCase() === text.toLowerCase()) same.push(o); });
  return same.length === 1 ? same[0] : undefined;
}

const GROUND_WORDS = /^(the\s+)?(ground|floor|ground\s+plane|ground\s+level|y\s*=\s*0(\.0+)?|0)$/i;

// The support rest_on names (null: the ground, y = 0; undefined: no rest), checked before
// anything changes.
// `object` is the one to move (null while it is being added under `name`).
export function findSupport(scene, object, name, restOn) {
  const text = String(restOn).trim();
  if (object && !hasGeometry(object)) {
    throw new OpError(`"${name}" is ${kindOf(object)} without geometry, so it cannot rest on anything; give it a position instead`);
  }
  const support = scene.getObjectByName(text) ?? inAnyCase(scene, text);
  // "ground" is y = 0 in any case, unless an object has exactly that name; so are the other
  // ways a model writes it ("the floor" in an empty scene, "y = 0": threejs/two-apart).
  if (!support && GROUND_WORDS.test(text)) return null;
  // Nothing stands on itself. Small models fill rest_on with the object's own name (a new
  // "floor" on "floor"): a new object then goes on the ground, one already placed stays put.
  if (text === name || (support && object && support === object)) return object ? undefined : null;
  if (!support) throw new OpError(`rest_on: no object named "${text}"; use "ground" (y=0) or one of: ${listNames(scene)}`);
  if (object && within(support, object)) throw new OpError(`"${name}" cannot rest on "${text}", which is part of it`);
  if (!hasGeometry(support)) throw new OpError(`cannot rest on "${text}": it is ${kindOf(support)} without geometry; rest on "ground" or an object with geometry`);
  return support;
}

// Move `object` in world space by `delta` (in its parent's space, so the world step is exact).
function moveInWorld(object, delta) {
  const target = object.getWorldPosition(new THREE.Vector3()).add(delta);
  if (object.parent) object.parent.worldToLocal(target);
  object.position.copy(target);
  object.updateWorldMatrix(false, true);
}

// Put the lowest point of `object` on y = 0 or on the top of the support's world box, centred
// on the support unless the call gave a position (then x and z stay). Says where it ended up.
export function restOn(object, support, keepXZ) {
  const box = worldBox(object);
  const delta = new THREE.Vector3(0, -box.min.y, 0);
  if (support) {
    const below = worldBox(support);
    delta.y = below.max.y - box.min.y;
    if (!keepXZ) {
      const mine = box.getCenter(new THREE.Vector3());
      const theirs = below.getCenter(new THREE.Vector3());
      delta.x = theirs.x - mine.x;
      delta.z = theirs.z - mine.z;
    }
    moveInWorld(object, delta);
    return `rests on ${support.name} (top y=${num(below.max.y)}), ${keepXZ ? 'at the given x, z' : 'centred on it'}`;
  }
  moveInWorld(object, delta);
  return `rests on the ground (bottom y=${num(worldBox(object).min.y)})`;
}

// What look_at / target aims at: a point [x, y, z], or an object's name (the centre of its world
// box; a light, camera or empty: where it is). "origin" and "ground" are (0, 0, 0) unless an
// object has that name. `self` (the camera or light being aimed) cannot be its own target.
export function resolveTarget(scene, value, what, self, selfName) {
  if (Array.isArray(value)) {
    if (value.length !== 3 || value.some((v) => !Number.isFinite(Number(v)))) {
      throw new OpError(`${what} must be 3 numbers [x, y, z] or an object's name; got ${JSON.stringify(value)}`);
    }
    const at = new THREE.Vector3(...value.map(Number));
    return { at, label: point(at) };
  }
  const text = String(value ?? '').trim();
  const found = text ? scene.getObjectByName(text) : null;
  const said = text.toLowerCase().replace(/^the /, '');
  if (!found && said === 'origin') return { at: new THREE.Vector3(), label: 'the origin (0, 0, 0)' };
  // "ground", as rest_on says it: the ground's centre (a light aimed "at the ground").
  if (!found && said === 'ground') return { at: new THREE.Vector3(), label: 'the ground at (0, 0, 0)' };
  if ((self && found === self) || (selfName && text === selfName)) throw new OpError(`"${text}" cannot aim at itself; give ${what} another object or a point`);
  if (!found) throw new OpError(`${what}: no object named "${text}"; give a point [x, y, z] or one of: ${listNames(scene)}`);
  if (self && within(found, self)) throw new OpError(`${what}: "${text}" is part of what is being aimed, so it would turn with it`);
  const at = hasGeometry(found) ? worldBox(found).getCenter(new THREE.Vector3()) : found.getWorldPosition(new THREE.Vector3());
  return { at, label: `${found.name} ${point(at)}` };
}

// Where `above` puts a light: centred over the named object's world box, `gap` above its top
// (an object without geometry: its world position). Small models cannot add an object's height
// to its position ("a point light 2 above the hedge" came as [0, 1, 2]), so the page measures.
// Checked before anything changes; `selfName` is the light's own name.
export function overObject(scene, above, gap, selfName) {
  const text = String(above).trim();
  const wanted = Number(gap);
  if (!Number.isFinite(wanted) || wanted < 0) throw new OpError(`gap must be 0 or more; got ${JSON.stringify(gap)}`);
  const found = scene.getObjectByName(text) ?? inAnyCase(scene, text);
  if (found && found.name === selfName) throw new OpError(`above: "${text}" is this light itself; give the object it goes over`);
  if (!found) throw new OpError(`above: no object named "${text}"; give one of: ${listNames(scene)}`);
  let centre, top;
  if (hasGeometry(found)) {
    const box = worldBox(found);
    centre = box.getCenter(new THREE.Vector3());
    top = box.max.y;
  } else {
    centre = found.getWorldPosition(new THREE.Vector3());
    top = centre.y;
  }
  const at = new THREE.Vector3(centre.x, top + wanted, centre.z);
  return { at, centre, label: `${num(wanted)} above ${found.name} (top y=${num(top)})`, name: found.name };
}
