extends SceneTree
# agentsdk class info (Godot 3): which classes exist, what properties they and scripts have and
# of which type, so the toolkit can refuse `albedo_color` on a MeshInstance before writing it to
# a scene and store bare text typed for a String property as that string.
# The job is a JSON file named by AGENTSDK_GODOT_JOB:
# {"classes": [...], "scripts": [...], "colours": [...], "all_classes": bool, "out": path}.

# Variant type names, spelled as the literals of this generation are
const TYPE_NAMES = {
	TYPE_NIL: "Nil", TYPE_BOOL: "bool", TYPE_INT: "int", TYPE_REAL: "float",
	TYPE_STRING: "String", TYPE_VECTOR2: "Vector2", TYPE_RECT2: "Rect2", TYPE_VECTOR3: "Vector3",
	TYPE_TRANSFORM2D: "Transform2D", TYPE_PLANE: "Plane", TYPE_QUAT: "Quat", TYPE_AABB: "AABB",
	TYPE_BASIS: "Basis", TYPE_TRANSFORM: "Transform", TYPE_COLOR: "Color",
	TYPE_NODE_PATH: "NodePath", TYPE_RID: "RID", TYPE_OBJECT: "Object",
	TYPE_DICTIONARY: "Dictionary", TYPE_ARRAY: "Array", TYPE_RAW_ARRAY: "PoolByteArray",
	TYPE_INT_ARRAY: "PoolIntArray", TYPE_REAL_ARRAY: "PoolRealArray",
	TYPE_STRING_ARRAY: "PoolStringArray", TYPE_VECTOR2_ARRAY: "PoolVector2Array",
	TYPE_VECTOR3_ARRAY: "PoolVector3Array", TYPE_COLOR_ARRAY: "PoolColorArray",
}


func _init():
	var file = File.new()
	if file.open(OS.get_environment("AGENTSDK_GODOT_JOB"), File.READ) != OK:
		printerr("AGENTSDK: cannot read the job file")
		quit(3)
		return
	var job = parse_json(file.get_as_text())
	file.close()
	var out = {"classes": {}, "scripts": {}, "colours": {}, "all_classes": []}
	if job.get("all_classes", false):
		out["all_classes"] = Array(ClassDB.get_class_list())
	for name in job.get("classes", []):
		out["classes"][name] = describe_class(name)
	for path in job.get("scripts", []):
		out["scripts"][path] = describe_script(path)
	for name in job.get("colours", []):
		out["colours"][name] = named_colour(name)
	var dump = File.new()
	dump.open(job["out"], File.WRITE)
	dump.store_string(to_json(out))
	dump.close()
	quit(0)


static func describe_class(name):
	if not ClassDB.class_exists(name):
		return {"exists": false}
	var info = {
		"exists": true,
		"node": ClassDB.is_parent_class(name, "Node"),
		"resource": ClassDB.is_parent_class(name, "Resource"),
		"instantiable": ClassDB.can_instance(name),
		"inherits": [],
		"properties": [],
		"types": {},
		"resources": {},
		"enums": {},
	}
	var parent = ClassDB.get_parent_class(name)
	while parent != "":
		info["inherits"].append(parent)
		parent = ClassDB.get_parent_class(parent)
	var props = ClassDB.class_get_property_list(name)
	if info["instantiable"]:
		# an instance also lists what it makes up itself (theme overrides: custom_colors/...)
		var instance = ClassDB.instance(name)
		if instance != null:
			props += instance.get_property_list()
			if not instance is Reference:
				instance.free()
	for prop in props:
		# every settable property (rotation has no editor usage), not the inspector's headings
		var key = prop["name"]
		if prop["usage"] & (PROPERTY_USAGE_CATEGORY | PROPERTY_USAGE_GROUP) or key in info["types"]:
			continue
		info["properties"].append(key)
		info["types"][key] = TYPE_NAMES.get(prop["type"], "Nil")
		if prop["type"] == TYPE_OBJECT and prop["hint"] == PROPERTY_HINT_RESOURCE_TYPE:
			info["resources"][key] = resource_classes(prop["hint_string"])
		elif prop["type"] == TYPE_INT and prop["hint"] == PROPERTY_HINT_ENUM:
			info["enums"][key] = prop["hint_string"]
	return info


static func resource_classes(hint):
	# "ShaderMaterial,SpatialMaterial" or "Mesh": the classes a new value may be, abstract ones
	# replaced by what can be made from them
	var found = []
	for base in hint.split(","):
		var family = [base] + Array(ClassDB.get_inheriters_from_class(base))
		for cls in family:
			if ClassDB.class_exists(cls) and ClassDB.can_instance(cls) and not cls in found:
				found.append(cls)
	return found


static func describe_script(path):
	var script = load(path)
	if script == null or not script is Script or not script.can_instance():
		return {"ok": false}
	var names = []
	var types = {}
	for prop in script.get_script_property_list():
		names.append(prop["name"])
		types[prop["name"]] = TYPE_NAMES.get(prop["type"], "Nil")
	return {"ok": true, "base": script.get_instance_base_type(), "properties": names, "types": types}


static func named_colour(name):
	# ColorN answers black (with an error line) for a name it does not know
	var colour = ColorN(name.strip_edges().to_lower())
	var black = name.strip_edges().to_lower() == "black"
	if colour == Color(0, 0, 0, 1) and not black:
		return null
	return [colour.r, colour.g, colour.b, colour.a]
