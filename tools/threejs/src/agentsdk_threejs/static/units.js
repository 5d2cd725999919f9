// The objects a report speaks about ("units"): the named top-level objects of the scene.
// An unnamed group (a loaded model's wrapper) is looked through to its children; an unnamed
// mesh gets a label such as "mesh#2". Lights, cameras and empty objects are not units.
import * as THREE from 'three';

export function isDrawable(object) {
  return Boolean((object.isMesh || object.isPoints || object.isLine || object.isSprite) && object.geometry);
}

export function hasDrawable(object) {
  let found = false;
  object.traverse((child) => { if (!found && isDrawable(child)) found = true; });
  return found;
}

export function reportUnits(scene) {
  const units = [];
  const taken = new Set();
  const counters = {};
  const label = (object) => {
    let name = object.name;
    if (!name) {
      const kind = object.type.replace(/^Instanced/, 'instanced').toLowerCase();
      counters[kind] = (counters[kind] || 0) + 1;
      name = `${kind}#${counters[kind]}`;
    }
    let unique = name;
    for (let n = 2; taken.has(unique); n += 1) unique = `${name} (${n})`;
    taken.add(unique);
    return unique;
  };
  const visit = (object) => {
    if (object.isLight || object.isCamera || !hasDrawable(object)) return;
    if (!object.name && !isDrawable(object) && object.children.length) {
      for (const child of object.children) visit(child);
      return;
    }
    units.push({ name: label(object), object });
  };
  for (const child of scene.children) visit(child);
  return units;
}

function firstColor(object) {
  let color = null;
  object.traverse((child) => {
    if (color || !child.material) return;
    const material = Array.isArray(child.material) ? child.material[0] : child.material;
    if (material && material.color) color = '#' + material.color.getHexString();
  });
  return color;
}

function round(values) {
  return values.map((v) => Math.round(v * 1000) / 1000);
}

// What the scene holds, for the text a model reads after every operation.
export function describeScene(scene, camera, target) {
  const objects = reportUnits(scene).map(({ name, object }) => {
    const box = new THREE.Box3().setFromObject(object, true);
    const info = object.userData.agentsdk || {};
    return {
      name,
      shape: info.shape || (object.isInstancedMesh ? 'instanced' : object.isMesh ? 'mesh' : object.type.toLowerCase()),
      color: firstColor(object),
      position: round(object.getWorldPosition(new THREE.Vector3()).toArray()),
      size: box.isEmpty() ? null : round(box.getSize(new THREE.Vector3()).toArray()),
      bbox_min: box.isEmpty() ? null : round(box.min.toArray()),
      bbox_max: box.isEmpty() ? null : round(box.max.toArray()),
      visible: object.visible,
    };
  });
  const lights = [];
  scene.traverse((object) => {
    if (!object.isLight) return;
    lights.push({
      name: object.name || object.type,
      kind: object.type.replace(/Light$/, '').toLowerCase(),
      intensity: Math.round(object.intensity * 1000) / 1000,
      position: object.isAmbientLight ? null : round(object.getWorldPosition(new THREE.Vector3()).toArray()),
      target: object.target ? round(object.target.getWorldPosition(new THREE.Vector3()).toArray()) : null,
    });
  });
  return {
    objects,
    lights,
    camera: {
      type: camera.type,
      position: round(camera.position.toArray()),
      target: round(target.toArray()),
      fov: camera.isPerspectiveCamera ? camera.fov : null,
    },
  };
}

// World-space boxes (tight: from the vertices) of named objects, or of every unit.
export function objectBounds(scene, names) {
  const units = reportUnits(scene);
  let chosen = units;
  if (names && names.length) {
    chosen = names.map((name) => {
      const unit = units.find((u) => u.name === name);
      const object = unit ? unit.object : scene.getObjectByName(name);
      return object ? { name, object } : { name, object: null };
    });
    const missing = chosen.filter((item) => !item.object).map((item) => item.name);
    if (missing.length) {
      const known = units.map((u) => u.name);
      return { error: `no object named ${missing.map((n) => `"${n}"`).join(', ')} in the scene; names: ${known.length ? known.join(', ') : '(the scene is empty)'}` };
    }
  }
  return {
    objects: chosen.map(({ name, object }) => {
      const box = new THREE.Box3().setFromObject(object, true);
      return { name, min: box.isEmpty() ? null : box.min.toArray(), max: box.isEmpty() ? null : box.max.toArray() };
    }),
  };
}
