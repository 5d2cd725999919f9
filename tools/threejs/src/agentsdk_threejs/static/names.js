// Finding objects by name, and the error a model can fix (OpError: its message goes back to
// the model with "Nothing was changed").
export class OpError extends Error {}

export function namesInScene(scene) {
  const names = [];
  scene.traverse((object) => { if (object !== scene && object.name) names.push(object.name); });
  return names;
}

// At most 20 names, so a scene of hundreds of objects does not flood a small model's context.
export function listNames(scene) {
  const names = namesInScene(scene);
  if (!names.length) return '(the scene is empty)';
  const more = names.length > 20 ? `, and ${names.length - 20} more` : '';
  return names.slice(0, 20).join(', ') + more;
}

export function findNamed(scene, name) {
  const object = name ? scene.getObjectByName(String(name)) : null;
  if (!object) throw new OpError(`no object named "${name}" in the scene; names: ${listNames(scene)}`);
  return object;
}

// A number as a model reads it: up to 4 decimals, no "-0".
export function num(value) {
  const rounded = Number(Number(value).toFixed(4));
  return String(Object.is(rounded, -0) ? 0 : rounded);
}

export function point(vector) {
  return `(${vector.toArray().map(num).join(', ')})`;
}
